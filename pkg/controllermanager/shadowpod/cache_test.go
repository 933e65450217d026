package shadowpod

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
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

// TestShadowPodCache: a ShadowPod keeps its whole spec until its Pod has
// existed (status), and only what keep returns after; a failed creation or
// a name conflict is no Pod, so the spec stays for the next try.
func TestShadowPodCache(t *testing.T) {
	transform := ShadowPodCache(func(s *corev1.PodSpec) corev1.PodSpec {
		return corev1.PodSpec{Overhead: s.Overhead}
	}).Transform
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}},
		Overhead: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}}
	shadow := func(reason string) *offv1beta1.ShadowPod {
		sp := &offv1beta1.ShadowPod{ObjectMeta: metav1.ObjectMeta{Name: "db", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "x"}},
			Labels: map[string]string{"app": "db", consts.OriginClusterIDLabel: "rome"}, Annotations: map[string]string{"a": "b"}},
			Spec: offv1beta1.ShadowPodSpec{Pod: *spec.DeepCopy()}}
		if reason != "" {
			setReady(&sp.Status, metav1.ConditionFalse, reason, "")
		}
		return sp
	}
	for _, tt := range []struct {
		reason  string
		trimmed bool
	}{{"", false}, {ReasonCreationFailed, false}, {ReasonNameConflict, false},
		{ReasonPodNotReady, true}, {ReasonPodReady, true}, {ReasonTerminating, true}, {ReasonRecreationFailed, true}} {
		out, err := transform(shadow(tt.reason))
		if err != nil {
			t.Fatal(err)
		}
		got := out.(*offv1beta1.ShadowPod)
		if got.ManagedFields != nil {
			t.Errorf("%q: managed fields kept", tt.reason)
		}
		if specTrimmed(got) != tt.trimmed {
			t.Errorf("%q: specTrimmed = %v, want %v", tt.reason, specTrimmed(got), tt.trimmed)
		}
		want, wantMeta := spec, shadow(tt.reason).ObjectMeta
		wantMeta.ManagedFields = nil
		if tt.trimmed {
			want = corev1.PodSpec{Overhead: spec.Overhead}
			wantMeta.Labels, wantMeta.Annotations = map[string]string{consts.OriginClusterIDLabel: "rome"}, nil
		}
		if !equality.Semantic.DeepEqual(got.Spec.Pod, want) {
			t.Errorf("%q: cached spec %+v, want %+v", tt.reason, got.Spec.Pod, want)
		}
		if !equality.Semantic.DeepEqual(got.ObjectMeta, wantMeta) {
			t.Errorf("%q: cached metadata %+v, want %+v", tt.reason, got.ObjectMeta, wantMeta)
		}
	}
}
