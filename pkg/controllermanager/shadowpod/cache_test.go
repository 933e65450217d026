package shadowpod

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPodWithoutSpec: the cache keeps what the controllers read of a Pod
// (metadata, status, node name) and drops the rest of its spec and its
// managed fields.
func TestPodWithoutSpec(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "twin", Labels: map[string]string{"app": "db"},
			Annotations: map[string]string{"a": "b"}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kwok"}}},
		Spec: corev1.PodSpec{NodeName: "worker-1", Containers: []corev1.Container{{Name: "main", Image: "busybox"}},
			Volumes: []corev1.Volume{{Name: "data"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.7"},
	}
	out, err := podWithoutSpec(pod)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Pod)
	if got.Spec.NodeName != "worker-1" || got.Spec.Containers != nil || got.Spec.Volumes != nil {
		t.Errorf("spec kept: %+v; want the node name alone", got.Spec)
	}
	if got.ManagedFields != nil {
		t.Errorf("managed fields kept: %v", got.ManagedFields)
	}
	if got.Labels["app"] != "db" || got.Annotations["a"] != "b" || got.Status.Phase != corev1.PodRunning || got.Status.PodIP != "10.0.0.7" {
		t.Errorf("metadata or status lost: %+v %+v", got.ObjectMeta, got.Status)
	}
	// Anything else passes through unchanged.
	cm := &corev1.ConfigMap{Data: map[string]string{"k": "v"}}
	if out, err := podWithoutSpec(cm); err != nil || out.(*corev1.ConfigMap).Data["k"] != "v" {
		t.Errorf("a non-Pod changed: %v, %v", out, err)
	}
}
