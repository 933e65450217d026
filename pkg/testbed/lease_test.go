package testbed

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestNodeLeases checks that kwok heartbeats its nodes with Leases, as a
// kubelet does: without them kube-controller-manager marks the nodes and
// their pods NotReady a minute after start.
func TestNodeLeases(t *testing.T) {
	cs := shared.Clusters[0].Client()
	ctx := context.Background()
	deadline := time.Now().Add(20 * time.Second)
	for {
		leases, err := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).List(ctx, metav1.ListOptions{})
		if err == nil && len(leases.Items) > 0 {
			t.Logf("%d node leases", len(leases.Items))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no node leases: %v", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
