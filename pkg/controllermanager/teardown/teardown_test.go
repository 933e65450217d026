package teardown

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/deploy/charts/liqo/files/rbac"
)

// TestWritableKinds: the kinds looked at in a twin are those the consumer's
// role lets it create, update or patch, read from the generated role; read-
// only kinds and subresources are not, and a kind the API server does not
// serve is skipped.
func TestWritableKinds(t *testing.T) {
	role, err := rbac.ClusterRole("liqo-remote-offloading")
	if err != nil {
		t.Fatal(err)
	}
	mapper := meta.NewDefaultRESTMapper(nil)
	served := []schema.GroupVersionKind{
		corev1.SchemeGroupVersion.WithKind("ConfigMap"), corev1.SchemeGroupVersion.WithKind("Secret"),
		corev1.SchemeGroupVersion.WithKind("Service"), corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim"),
		corev1.SchemeGroupVersion.WithKind("Pod"), corev1.SchemeGroupVersion.WithKind("Event"),
		offv1beta1.GroupVersion.WithKind("ShadowPod"), offv1beta1.GroupVersion.WithKind("ShadowEndpointSlice"),
	} // no Ingress: networking.k8s.io not served
	for _, gvk := range served {
		mapper.Add(gvk, meta.RESTScopeNamespace)
	}
	kinds, err := writableKinds(mapper, role.Rules)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, k := range kinds {
		got[k.Kind] = true
	}
	for _, want := range []string{"ConfigMap", "Secret", "Service", "PersistentVolumeClaim", "ShadowPod", "ShadowEndpointSlice"} {
		if !got[want] {
			t.Errorf("%s missing from %v", want, kinds)
		}
	}
	for _, not := range []string{"Pod", "Event"} {
		if got[not] {
			t.Errorf("%s, which the consumer may only read, in %v", not, kinds)
		}
	}
	if _, err := writableKinds(mapper, []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods/exec"}, Verbs: []string{"create"}}}); err != nil {
		t.Errorf("a subresource: %v", err)
	}
}

// TestOurs: only Kubernetes' PVC protection, on claims, is the provider's
// own; the same name on another kind, or any other finalizer, is not.
func TestOurs(t *testing.T) {
	pvc := schema.GroupKind{Kind: "PersistentVolumeClaim"}
	cm := schema.GroupKind{Kind: "ConfigMap"}
	for _, c := range []struct {
		gk   schema.GroupKind
		f    string
		want bool
	}{
		{pvc, pvcProtection, true},
		{cm, pvcProtection, false},
		{pvc, "rome.example.com/hold", false},
		{schema.GroupKind{Group: offv1beta1.GroupVersion.Group, Kind: "ShadowPod"}, "liqo.io/anything", false},
	} {
		if got := ours(c.gk, c.f); got != c.want {
			t.Errorf("ours(%s, %s) = %v, want %v", c.gk, c.f, got, c.want)
		}
	}
	deleted := time.Unix(1000, 0)
	if left := overdue(deleted, deleted.Add(time.Minute), 10*time.Minute); left != 9*time.Minute {
		t.Errorf("overdue a minute in: %s left, want 9m", left)
	}
}
