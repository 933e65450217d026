// Package output is how liqoctl prints: its step-by-step progress (a line
// naming the step when it starts, an INFO, WARN or ERROR line when it
// ends); objects and documents in the format -o asks for, through
// k8s.io/cli-runtime's printers (Flags); and tables, as kubectl's (Table).
package output

import (
	"fmt"
	"io"
	"time"
)

// Printer writes progress lines.
type Printer struct {
	W       io.Writer
	Verbose bool
}

// Step announces a step.
func (p *Printer) Step(format string, args ...any) { fmt.Fprintf(p.W, format+"\n", args...) }

// Info reports a completed step.
func (p *Printer) Info(format string, args ...any) { fmt.Fprintf(p.W, "INFO: "+format+"\n", args...) }

// Warn reports something the user should know about but that did not stop
// the command.
func (p *Printer) Warn(format string, args ...any) { fmt.Fprintf(p.W, "WARN: "+format+"\n", args...) }

// Timed reports a completed step with its duration when verbose.
func (p *Printer) Timed(start time.Time, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if p.Verbose {
		msg += fmt.Sprintf(" (%s)", time.Since(start).Round(time.Millisecond))
	}
	p.Info("%s", msg)
}
