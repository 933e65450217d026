package kit

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PatchStatus writes obj's status as a merge patch against before (a deep
// copy taken before the reconcile changed obj), and writes nothing when the
// status did not change: most reconciles find everything in place, and a
// write per reconcile would wake every watcher for nothing. A NotFound
// (the object went meanwhile) is not an error.
func PatchStatus(ctx context.Context, c client.Client, obj, before client.Object) error {
	data, err := statusPatch(obj, before)
	if err != nil {
		return fmt.Errorf("computing the status patch of %s: %w", client.ObjectKeyFromObject(obj), err)
	}
	if string(data) == "{}" {
		return nil
	}
	return client.IgnoreNotFound(c.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, data)))
}

// statusPatch is the merge patch from before's status to obj's. The status
// subresource takes nothing else from a patch, so only the two statuses are
// encoded and compared where the objects have a Status field: a whole
// object can be many times its status (a ShadowPod carries a pod spec),
// and encoding it twice per write was a tenth of a busy provider
// manager's CPU. Others are compared whole.
func statusPatch(obj, before client.Object) ([]byte, error) {
	after, ok := statusField(obj)
	was, wasOK := statusField(before)
	if !ok || !wasOK {
		return client.MergeFrom(before).Data(obj)
	}
	a, err := json.Marshal(map[string]any{"status": after})
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(map[string]any{"status": was})
	if err != nil {
		return nil, err
	}
	return jsonpatch.CreateMergePatch(b, a)
}

// statusField is the Status field of a pointer to a struct that has one.
func statusField(obj client.Object) (any, bool) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	f := v.Elem().FieldByName("Status")
	if !f.IsValid() || !f.CanInterface() {
		return nil, false
	}
	return f.Interface(), true
}
