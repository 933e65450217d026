package gateway

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

type eventUpdate = event.UpdateEvent

// runnable adapts a function to a manager Runnable.
type runnable func(ctx context.Context) error

func (r runnable) Start(ctx context.Context) error { return r(ctx) }

var _ manager.Runnable = runnable(nil)

// sourceOnce enqueues req once at start, so the State is applied even
// before any watched object exists (the tunnel comes up and waits for
// the peer's key).
func sourceOnce(req reconcile.Request) source.Source {
	return source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		q.Add(req)
		return nil
	})
}

// equalNodeRouting tells whether two versions of a Node route the same:
// same addresses, pod CIDRs and kind.
func equalNodeRouting(a, b *corev1.Node) bool {
	return slices.Equal(a.Status.Addresses, b.Status.Addresses) &&
		slices.Equal(a.Spec.PodCIDRs, b.Spec.PodCIDRs) && a.Spec.PodCIDR == b.Spec.PodCIDR &&
		a.Labels["liqo.io/type"] == b.Labels["liqo.io/type"]
}
