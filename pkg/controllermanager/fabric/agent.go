package fabric

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FieldOwner is the server-side apply field manager of the agent's objects.
const FieldOwner = "liqo-fabric-controller"

// Agent applies the node agent's objects once the manager leads.
type Agent struct {
	Client    client.Client
	Options   Options
	Namespace string
}

// Start applies the objects and returns: they change only with the
// manager's flags, and the DaemonSet controller keeps the pods. A failure
// is retried with backoff rather than stopping the manager, whose other
// controllers do not depend on the fabric.
func (a *Agent) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("fabric")
	backoff := wait.Backoff{Duration: time.Second, Factor: 2, Steps: 1 << 30, Cap: time.Minute}
	_ = wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		if err := a.apply(ctx); err != nil {
			log.Error(err, "retrying")
			return false, nil
		}
		return true, nil
	})
	return nil
}

func (a *Agent) apply(ctx context.Context) error {
	for _, o := range Objects(a.Options, a.Namespace) {
		if err := a.Client.Patch(ctx, o, client.Apply, client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying the node agent's %s %s: %w", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
		}
	}
	return nil
}

// NeedLeaderElection: only the active replica writes.
func (a *Agent) NeedLeaderElection() bool { return true }
