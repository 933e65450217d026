package reflection

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// TestLocalPodPrefersItsOwnWrite: a status write's result stands in for
// the cache's older copy until the cache has a version as new, and a pod
// gone from the cache is gone whatever was written (the reconcile must not
// act on a deleted pod).
func TestLocalPodPrefersItsOwnWrite(t *testing.T) {
	store := toolscache.NewStore(toolscache.MetaNamespaceKeyFunc)
	r := &reflector{written: toolscache.NewIntegerResourceVersionMutationCache(klog.Background(), store, nil, writtenTTL, false)}
	key := types.NamespacedName{Namespace: "ns", Name: "web"}
	pod := func(rv string, phase corev1.PodPhase) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, ResourceVersion: rv},
			Status: corev1.PodStatus{Phase: phase}}
	}
	phaseOf := func(what string) corev1.PodPhase {
		t.Helper()
		p, err := r.localPod(key)
		if err != nil || p == nil {
			t.Fatalf("%s: %v, %v", what, p, err)
		}
		return p.Status.Phase
	}

	if p, err := r.localPod(key); p != nil || err != nil {
		t.Fatalf("no pod yet: %v, %v", p, err)
	}
	if err := store.Add(pod("5", "")); err != nil {
		t.Fatal(err)
	}
	r.written.Mutation(pod("7", corev1.PodPending))
	if got := phaseOf("the write of Pending, the cache behind"); got != corev1.PodPending {
		t.Errorf("the cache behind the write: phase %q, want Pending (the write's)", got)
	}
	if err := store.Update(pod("9", corev1.PodRunning)); err != nil {
		t.Fatal(err)
	}
	if got := phaseOf("the cache past the write"); got != corev1.PodRunning {
		t.Errorf("the cache past the write: phase %q, want Running (the cache's)", got)
	}
	r.written.Mutation(pod("11", corev1.PodSucceeded))
	if err := store.Delete(pod("9", corev1.PodRunning)); err != nil {
		t.Fatal(err)
	}
	if p, err := r.localPod(key); p != nil || err != nil {
		t.Errorf("a pod gone from the cache: %v, %v, want none", p, err)
	}
}
