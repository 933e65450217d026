package teardown

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// pvcProtection is the finalizer Kubernetes' PVC protection controller puts
// on every claim and removes once no pod uses it: the pods go first.
const pvcProtection = "kubernetes.io/pvc-protection"

// ours tells whether f, on an object of kind gk, is a finalizer the
// provider's own controllers put and remove. The provider's controllers put
// none on a consumer's objects: the only one is Kubernetes' own.
func ours(gk schema.GroupKind, f string) bool {
	return gk == (schema.GroupKind{Kind: "PersistentVolumeClaim"}) && f == pvcProtection
}

// strip removes from obj, of kind gk, the finalizers that are not ours and
// returns them; nothing is written when there are none. The patch is
// conditional on obj's resourceVersion: a finalizer added since it was read
// is judged at the next look.
func strip(ctx context.Context, c client.Client, obj client.Object, gk schema.GroupKind) ([]string, error) {
	var keep, gone []string
	for _, f := range obj.GetFinalizers() {
		if ours(gk, f) {
			keep = append(keep, f)
		} else {
			gone = append(gone, f)
		}
	}
	if len(gone) == 0 {
		return nil, nil
	}
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	obj.SetFinalizers(keep)
	if err := c.Patch(ctx, obj, patch); err != nil {
		return nil, client.IgnoreNotFound(fmt.Errorf("removing finalizers %v from %s %s: %w", gone, gk.Kind, client.ObjectKeyFromObject(obj), err))
	}
	return gone, nil
}

// overdue returns how long is left before an object deleted at deleted may
// be forced out after timeout (0 or less: it may now).
func overdue(deleted, now time.Time, timeout time.Duration) time.Duration {
	return deleted.Add(timeout).Sub(now)
}
