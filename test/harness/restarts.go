package harness

import (
	"context"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
)

// WatchRestarts records every restart count the pod ns/name's first
// container shows, in the order the API server shows them, until the
// returned function is called; it then fails the test if the count ever
// went down, and returns the counts seen.
func WatchRestarts(ctx context.Context, t testing.TB, cs kubernetes.Interface, ns, name string) func() []int32 {
	t.Helper()
	w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok && len(p.Status.ContainerStatuses) > 0 {
				mu.Lock()
				seen = append(seen, p.Status.ContainerStatuses[0].RestartCount)
				mu.Unlock()
			}
		}
	}()
	return func() []int32 {
		t.Helper()
		w.Stop()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for i := 1; i < len(seen); i++ {
			if seen[i] < seen[i-1] {
				t.Errorf("the restart count of pod %s/%s went down: %v", ns, name, seen)
				break
			}
		}
		return seen
	}
}
