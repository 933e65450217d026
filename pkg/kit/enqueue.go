package kit

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// EnqueueAll maps every event of T to one and the same request, for the
// controllers that reconcile everything at once (a summary of all nodes,
// the placement of all held pods): a burst of events makes one pass.
func EnqueueAll[T client.Object]() handler.TypedEventHandler[T, reconcile.Request] {
	return handler.TypedEnqueueRequestsFromMapFunc(func(context.Context, T) []reconcile.Request { return []reconcile.Request{{}} })
}
