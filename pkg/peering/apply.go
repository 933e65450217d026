package peering

import (
	"context"

	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Apply creates obj or updates it with mutate, as controllerutil's
// CreateOrUpdate does, and tries again on a fresh read when the update
// conflicts. The peering's objects are written by both sides (a
// controller adds its finalizer or status while liqoctl or the other
// cluster's manager updates the spec), and unlike a reconciler, which is
// requeued, a peering step that lost such a race would fail the command.
func Apply(ctx context.Context, c client.Client, obj client.Object, mutate controllerutil.MutateFn) (controllerutil.OperationResult, error) {
	var result controllerutil.OperationResult
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		var err error
		result, err = controllerutil.CreateOrUpdate(ctx, c, obj, mutate)
		return err
	})
	return result, err
}
