package virtualkubelet

import (
	"context"
	"fmt"
	"os"

	"github.com/go-logr/logr"
	vklog "github.com/virtual-kubelet/virtual-kubelet/log"
	vktrace "github.com/virtual-kubelet/virtual-kubelet/trace"
)

// withVKLogger makes virtual-kubelet log to l for everything run with the
// returned context. Setting its logger is not enough: every span the
// library starts replaces the context's logger with the span's, and the
// default tracer's spans have none, which sends all logging inside spans
// (the status and lease errors included) to the library's global discarding
// logger. The spans of spanTracer keep the logger of their context.
//
// Once ctx is cancelled the library's errors go to V(4): requests cut short
// by the shutdown itself are not worth an error in the log.
func withVKLogger(ctx context.Context, l logr.Logger) context.Context {
	stopping := func() bool { return ctx.Err() != nil }
	withLogger := vklog.WithLogger(ctx, vkLogger{l: l, stopping: stopping})
	return vktrace.WithTracer(withLogger, spanTracer{})
}

// WithLogger is withVKLogger for the other packages that run
// virtual-kubelet's code, such as the kubelet API's handlers.
func WithLogger(ctx context.Context, l logr.Logger) context.Context { return withVKLogger(ctx, l) }

// spanTracer traces nothing; its spans only carry loggers.
type spanTracer struct{}

func (spanTracer) StartSpan(ctx context.Context, _ string) (context.Context, vktrace.Span) {
	return ctx, loggerSpan{l: vklog.G(ctx)}
}

type loggerSpan struct{ l vklog.Logger }

func (loggerSpan) End()                   {}
func (loggerSpan) SetStatus(error)        {}
func (s loggerSpan) Logger() vklog.Logger { return s.l }

func (loggerSpan) WithField(ctx context.Context, k string, v any) context.Context {
	return vklog.WithLogger(ctx, vklog.G(ctx).WithField(k, v))
}

func (loggerSpan) WithFields(ctx context.Context, f vklog.Fields) context.Context {
	return vklog.WithLogger(ctx, vklog.G(ctx).WithFields(f))
}

// vkLogger routes virtual-kubelet's logging to the caller's logr logger:
// the library's default logger discards everything, including its errors
// writing the Node status and the Lease.
type vkLogger struct {
	l        logr.Logger
	err      error
	stopping func() bool
}

var _ vklog.Logger = vkLogger{}

// The library logs every status and lease write at Debug, hence V(4).
func (v vkLogger) Debug(args ...any)            { v.info(4, fmt.Sprint(args...)) }
func (v vkLogger) Debugf(f string, args ...any) { v.info(4, fmt.Sprintf(f, args...)) }
func (v vkLogger) Info(args ...any)             { v.info(1, fmt.Sprint(args...)) }
func (v vkLogger) Infof(f string, args ...any)  { v.info(1, fmt.Sprintf(f, args...)) }
func (v vkLogger) Warn(args ...any)             { v.info(0, fmt.Sprint(args...)) }
func (v vkLogger) Warnf(f string, args ...any)  { v.info(0, fmt.Sprintf(f, args...)) }
func (v vkLogger) Error(args ...any)            { v.error(fmt.Sprint(args...)) }
func (v vkLogger) Errorf(f string, args ...any) { v.error(fmt.Sprintf(f, args...)) }

// Fatal keeps the interface's promise to end the process; the node
// controller never calls it.
func (v vkLogger) Fatal(args ...any) { v.Error(args...); os.Exit(1) }
func (v vkLogger) Fatalf(f string, args ...any) {
	v.Errorf(f, args...)
	os.Exit(1)
}

func (v vkLogger) WithField(k string, val any) vklog.Logger {
	v.l = v.l.WithValues(k, val)
	return v
}

func (v vkLogger) WithFields(fields vklog.Fields) vklog.Logger {
	for k, val := range fields {
		v.l = v.l.WithValues(k, val)
	}
	return v
}

func (v vkLogger) WithError(err error) vklog.Logger {
	v.err = err
	return v
}

func (v vkLogger) error(msg string) {
	if v.stopping != nil && v.stopping() {
		v.info(4, msg)
		return
	}
	v.l.Error(v.err, msg)
}

func (v vkLogger) info(level int, msg string) {
	if v.err != nil {
		v.l.V(level).Info(msg, "error", v.err.Error())
		return
	}
	v.l.V(level).Info(msg)
}
