package kit

import (
	"encoding/json"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
)

// TestStatusPatch: the status-only patch, applied to the object as it
// was, gives the new status, like the whole-object merge patch; an
// unchanged status is an empty patch whatever else changed; objects
// without a Status field are compared whole.
func TestStatusPatch(t *testing.T) {
	before := &offv1beta1.ShadowPod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: map[string]string{"a": "b"}},
		Spec:       offv1beta1.ShadowPodSpec{Pod: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}},
		Status: offv1beta1.ShadowPodStatus{Phase: corev1.PodPending, Conditions: []metav1.Condition{
			{Type: "Ready", Status: metav1.ConditionFalse, Reason: "PodNotReady", Message: "starting"},
			{Type: "Other", Status: metav1.ConditionTrue, Reason: "Fine"},
		}},
	}
	after := before.DeepCopy()
	after.Labels["a"] = "changed" // not the status: not in the patch
	after.Status.Phase = corev1.PodRunning
	after.Status.Conditions = after.Status.Conditions[:1]
	after.Status.Conditions[0].Status, after.Status.Conditions[0].Reason, after.Status.Conditions[0].Message = metav1.ConditionTrue, "PodReady", ""

	data, err := statusPatch(after, before)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := client.MergeFrom(before).Data(after)
	if err != nil {
		t.Fatal(err)
	}
	for name, patch := range map[string][]byte{"status-only": data, "whole-object": whole} {
		orig, _ := json.Marshal(before)
		patched, err := jsonpatch.MergePatch(orig, patch)
		if err != nil {
			t.Fatalf("%s patch %s: %v", name, patch, err)
		}
		var got offv1beta1.ShadowPod
		if err := json.Unmarshal(patched, &got); err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(after.Status)
		have, _ := json.Marshal(got.Status)
		if string(want) != string(have) {
			t.Fatalf("%s patch %s gives status %s, want %s", name, patch, have, want)
		}
	}
	var fields map[string]any
	if err := json.Unmarshal(data, &fields); err != nil || len(fields) != 1 || fields["status"] == nil {
		t.Fatalf("status-only patch %s: want only a status key", data)
	}

	unchanged := before.DeepCopy()
	unchanged.Labels["a"] = "changed"
	if data, err := statusPatch(unchanged, before); err != nil || string(data) != "{}" {
		t.Fatalf("unchanged status: patch %s, %v; want {}", data, err)
	}

	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "X", "status": map[string]any{"v": "1"}}}
	u2 := u.DeepCopy()
	u2.Object["status"] = map[string]any{"v": "2"}
	if data, err := statusPatch(u2, u); err != nil || string(data) != `{"status":{"v":"2"}}` {
		t.Fatalf("unstructured: patch %s, %v", data, err)
	}
}
