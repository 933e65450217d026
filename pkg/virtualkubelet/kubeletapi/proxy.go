package kubeletapi

import (
	"context"
	"io"
	"net/url"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	vkapi "github.com/virtual-kubelet/virtual-kubelet/node/api"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/utils/ptr"
)

// proxy carries out the kubelet API calls on the twin pods.
type proxy struct {
	resolver Resolver
	// base is the Server's context: virtual-kubelet runs exec and
	// port-forward with a background context, not the request's, so their
	// streams end with the Server instead.
	base context.Context
}

// logs streams the twin's container log.
func (p *proxy) logs(ctx context.Context, namespace, pod, container string, o vkapi.ContainerLogOpts) (io.ReadCloser, error) {
	t, cs, err := p.target(ctx, namespace, pod)
	if err != nil {
		return nil, err
	}
	rc, err := cs.CoreV1().Pods(t.Namespace).GetLogs(t.Name, logOptions(container, o)).Stream(ctx)
	return rc, remoteError(err)
}

// logOptions turns the kubelet API's log options back into the pod log
// options they came from; the zero values stand for options not given.
func logOptions(container string, o vkapi.ContainerLogOpts) *corev1.PodLogOptions {
	opts := &corev1.PodLogOptions{Container: container, Follow: o.Follow, Previous: o.Previous, Timestamps: o.Timestamps}
	if o.Tail > 0 {
		opts.TailLines = ptr.To(int64(o.Tail))
	}
	if o.LimitBytes > 0 {
		opts.LimitBytes = ptr.To(int64(o.LimitBytes))
	}
	if o.SinceSeconds > 0 {
		opts.SinceSeconds = ptr.To(int64(o.SinceSeconds))
	}
	if !o.SinceTime.IsZero() {
		opts.SinceTime = &metav1.Time{Time: o.SinceTime}
	}
	return opts
}

// exec runs cmd in the twin's container.
func (p *proxy) exec(_ context.Context, namespace, pod, container string, cmd []string, aio vkapi.AttachIO) error {
	return p.stream(namespace, pod, "exec", &corev1.PodExecOptions{
		Container: container, Command: cmd,
		Stdin: aio.Stdin() != nil, Stdout: aio.Stdout() != nil, Stderr: aio.Stderr() != nil, TTY: aio.TTY(),
	}, aio)
}

// attach attaches to the twin's container.
func (p *proxy) attach(_ context.Context, namespace, pod, container string, aio vkapi.AttachIO) error {
	return p.stream(namespace, pod, "attach", &corev1.PodAttachOptions{
		Container: container,
		Stdin:     aio.Stdin() != nil, Stdout: aio.Stdout() != nil, Stderr: aio.Stderr() != nil, TTY: aio.TTY(),
	}, aio)
}

// stream runs an exec or attach on the twin, with kubectl's executor: a
// WebSocket, or SPDY where the provider's API server does not upgrade to
// one. A non-zero exit status comes back as an error the kubelet API turns
// into the same status for the caller.
func (p *proxy) stream(namespace, pod, subresource string, opts runtime.Object, aio vkapi.AttachIO) error {
	ctx := p.base
	t, cs, err := p.target(ctx, namespace, pod)
	if err != nil {
		return err
	}
	u := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(t.Namespace).Name(t.Name).
		SubResource(subresource).VersionedParams(opts, scheme.ParameterCodec).URL()
	ex, err := executor(t.Config, u)
	if err != nil {
		return err
	}
	so := remotecommand.StreamOptions{Tty: aio.TTY()}
	// Only streams that exist are set: a nil interface, not a typed nil.
	if in := aio.Stdin(); in != nil {
		so.Stdin = in
	}
	if out := aio.Stdout(); out != nil {
		so.Stdout = out
	}
	if errOut := aio.Stderr(); errOut != nil {
		so.Stderr = errOut
	}
	if aio.TTY() {
		so.TerminalSizeQueue = &sizeQueue{ctx: ctx, sizes: aio.Resize()}
	}
	return remoteError(ex.StreamWithContext(ctx, so))
}

func executor(cfg *rest.Config, u *url.URL) (remotecommand.Executor, error) {
	ws, err := remotecommand.NewWebSocketExecutor(cfg, "GET", u.String())
	if err != nil {
		return nil, err
	}
	sp, err := remotecommand.NewSPDYExecutor(cfg, "POST", u)
	if err != nil {
		return nil, err
	}
	return remotecommand.NewFallbackExecutor(ws, sp, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
}

// sizeQueue hands the caller's terminal resizes to the remote executor.
type sizeQueue struct {
	ctx   context.Context
	sizes <-chan vkapi.TermSize
}

func (q *sizeQueue) Next() *remotecommand.TerminalSize {
	select {
	case s, ok := <-q.sizes:
		if !ok {
			return nil
		}
		return &remotecommand.TerminalSize{Width: s.Width, Height: s.Height}
	case <-q.ctx.Done():
		return nil
	}
}

// portForward forwards one stream to port of the twin.
func (p *proxy) portForward(_ context.Context, namespace, pod string, port int32, stream io.ReadWriteCloser) error {
	ctx := p.base
	t, err := p.resolver.Resolve(ctx, namespace, pod)
	if err != nil {
		return err
	}
	return forward(ctx, t, port, stream)
}

func (p *proxy) target(ctx context.Context, namespace, pod string) (*Target, kubernetes.Interface, error) {
	t, err := p.resolver.Resolve(ctx, namespace, pod)
	if err != nil {
		return nil, nil, err
	}
	return t, t.Clientset, nil
}

// remoteError keeps the provider's not-found and bad-request answers (no
// such container, container not running) those for the caller; the kubelet
// API answers anything else with 500.
func remoteError(err error) error {
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		return errdefs.AsNotFound(err)
	case apierrors.IsBadRequest(err):
		return errdefs.AsInvalidInput(err)
	}
	return err
}
