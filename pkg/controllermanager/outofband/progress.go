package outofband

import (
	"fmt"
	"time"

	"github.com/go-logr/logr"

	"github.com/liqo-go/liqo/pkg/peering"
)

// progress logs the shared steps' progress.
type progress struct{ log logr.Logger }

var _ peering.Progress = (*progress)(nil)

func (p *progress) Step(format string, args ...any) {
	p.log.V(1).Info(fmt.Sprintf(format, args...))
}

func (p *progress) Info(format string, args ...any) {
	p.log.Info(fmt.Sprintf(format, args...))
}

func (p *progress) Timed(start time.Time, format string, args ...any) {
	p.log.Info(fmt.Sprintf(format, args...), "took", time.Since(start).Round(time.Millisecond).String())
}
