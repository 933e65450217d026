package controllermanager

import (
	"context"
	"time"

	"k8s.io/client-go/rest"

	"github.com/liqo-go/liqo/deploy/charts/liqo/crds"
)

// RunLocal runs the controller manager as a supervised local process part:
// it applies the CRDs (there is no Helm chart to do it for a bare cluster)
// and restarts the manager after a failure, as a Deployment would restart
// its pod, until ctx is done. Errors are passed to onError.
func RunLocal(ctx context.Context, cfg *rest.Config, o Options, onError func(error)) {
	o.SelfProvision = true
	for backoff := time.Second; ctx.Err() == nil; {
		err := crds.Install(ctx, cfg)
		if err == nil {
			err = Run(ctx, cfg, o)
		}
		if ctx.Err() != nil {
			return
		}
		if err != nil && onError != nil {
			onError(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}
