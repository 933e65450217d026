package fuzz

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/liqo-go/liqo/pkg/webhook/budget"
)

// FuzzObjectBudget plays a consumer writing ConfigMaps and Secrets of
// sizes, names and labels of its choosing against the ObjectBudget, with
// the API server storing what is admitted and the informer telling the
// guard at once. Whatever the sequence: the stored objects never exceed
// the budget in bytes or in number; an update that does not grow an
// object is always admitted; a dry run changes nothing (the write after it
// gets the same answer); nothing panics.
func FuzzObjectBudget(f *testing.F) {
	f.Add([]byte{0, 0, 200, 1, 0, 200, 2, 0, 200, 3, 0, 200, 0, 1, 10}, "app")
	f.Add([]byte{0, 0, 255, 0, 0, 1, 4, 0, 0, 0, 1, 255, 8, 1, 255}, "checksum/config")
	f.Add([]byte{1, 2, 128, 9, 2, 128, 1, 3, 255, 5, 3, 0}, "")
	f.Fuzz(func(t *testing.T, ops []byte, label string) {
		const maxBytes, maxCount = 64 << 10, 3
		limit := budget.ObjectBudget{MaxBytes: resource.QuantityValue{Quantity: *resource.NewQuantity(maxBytes, resource.BinarySI)}, MaxCount: maxCount}
		guard := budget.New(limit)
		ctx := context.Background()
		stored := map[string]*corev1.ConfigMap{}
		for len(ops) >= 3 {
			op, name, size := ops[0]%16, fmt.Sprint("obj-", ops[1]%4), int(ops[2])*512
			ops = ops[3:]
			old := stored[name]
			if op%4 == 3 {
				if old != nil {
					guard.Deleted("peer", configMaps, old)
					delete(stored, name)
				}
				continue
			}
			obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "app-peer", Labels: map[string]string{label: name}},
				Data: map[string]string{"blob": strings.Repeat("x", size)}}
			answer := func(dryRun bool) string {
				why, err := guard.Admit(ctx, review(t, obj, old, dryRun), "peer", configMaps, obj, oldObject(old))
				if err != nil {
					t.Fatalf("admitting %s of %d bytes: %v", name, size, err)
				}
				return why
			}
			var why string
			if op%4 == 2 {
				dry := answer(true)
				if why = answer(false); (dry == "") != (why == "") {
					t.Fatalf("a dry run answered %q, the write after it %q", dry, why)
				}
			} else {
				why = answer(false)
			}
			if old != nil && why != "" && footprint(t, obj) <= footprint(t, old) {
				t.Fatalf("an update of %s not growing it refused: %s", name, why)
			}
			if why != "" {
				continue
			}
			if err := guard.Stored("peer", configMaps, obj); err != nil {
				t.Fatal(err)
			}
			stored[name] = obj
			var total int64
			for _, o := range stored {
				total += footprint(t, o)
			}
			if total > maxBytes || len(stored) > maxCount {
				t.Fatalf("the peer stores %d objects of %d bytes, over its budget of %d and %d", len(stored), total, maxCount, maxBytes)
			}
		}
	})
}

var configMaps = schema.GroupResource{Resource: "configmaps"}

// oldObject is old as the webhook's argument: no object for none.
func oldObject(old *corev1.ConfigMap) client.Object {
	if old == nil {
		return nil
	}
	return old
}

// footprint is the size the budget counts of o: its JSON.
func footprint(t *testing.T, o *corev1.ConfigMap) int64 {
	t.Helper()
	c := o.DeepCopy()
	c.TypeMeta = metav1.TypeMeta{}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return int64(len(b))
}

// review is the API server's admission request for writing obj over old
// (nil: a create).
func review(t *testing.T, obj, old *corev1.ConfigMap, dryRun bool) admission.Request {
	t.Helper()
	raw := func(o *corev1.ConfigMap) runtime.RawExtension {
		if o == nil {
			return runtime.RawExtension{}
		}
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		return runtime.RawExtension{Raw: b}
	}
	op := admissionv1.Create
	if old != nil {
		op = admissionv1.Update
	}
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{UID: "fuzz", Name: obj.Name, Namespace: obj.Namespace,
		Resource: metav1.GroupVersionResource{Version: "v1", Resource: configMaps.Resource}, Operation: op,
		Object: raw(obj), OldObject: raw(old), DryRun: ptr.To(dryRun)}}
}
