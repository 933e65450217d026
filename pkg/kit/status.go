package kit

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PatchStatus writes obj's status as a merge patch against before (a deep
// copy taken before the reconcile changed obj), and writes nothing when the
// status did not change: most reconciles find everything in place, and a
// write per reconcile would wake every watcher for nothing. A NotFound
// (the object went meanwhile) is not an error.
func PatchStatus(ctx context.Context, c client.Client, obj, before client.Object) error {
	patch := client.MergeFrom(before)
	data, err := patch.Data(obj)
	if err != nil {
		return fmt.Errorf("computing the status patch of %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	if string(data) == "{}" {
		return nil
	}
	return client.IgnoreNotFound(c.Status().Patch(ctx, obj, client.RawPatch(patch.Type(), data)))
}
