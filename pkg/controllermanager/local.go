package controllermanager

import (
	"context"
	"math"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/liqo-go/liqo/deploy/charts/liqo/crds"
)

// RunLocal runs the controller manager as a supervised part of a local
// process, self-provisioned after applying the CRDs (there is no Helm chart
// to install them and the rest on a bare cluster), and restarts it after a failure (after 1 s,
// doubling up to 10 s), as a Deployment would restart its pod, until ctx is
// done. Errors are passed to onError. Tests and benchmarks use it; the
// playground runs the liqo-controller-manager binary with --self-provision.
func RunLocal(ctx context.Context, cfg *rest.Config, o Options, onError func(error)) {
	o.SelfProvision = true
	// Steps is unbounded so that restarts never stop.
	backoff := wait.Backoff{Duration: time.Second, Factor: 2, Cap: 10 * time.Second, Steps: math.MaxInt32}
	// Until ends only with ctx: the condition never reports done or an error.
	_ = wait.DelayFunc(backoff.Step).Until(ctx, true, true, func(ctx context.Context) (bool, error) {
		err := crds.Install(ctx, cfg)
		if err == nil {
			err = Run(ctx, cfg, o)
		}
		if ctx.Err() == nil && err != nil && onError != nil {
			onError(err)
		}
		return false, nil
	})
}
