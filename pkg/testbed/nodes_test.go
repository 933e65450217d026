package testbed

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/liqo-go/liqo/test/harness"
)

// TestSimulatedNodeKeepsAddresses: kwok initializes again a simulated node
// whose Ready condition is not True (the node lifecycle controller marks it
// Unknown after an outage of the API server, as test/peering's provider
// outage does). Its InternalIP must survive that: the API server reaches
// kwok's kubelet API (logs, exec) at it, and a node without it answers
// "no preferred addresses found; known addresses: []".
func TestSimulatedNodeKeepsAddresses(t *testing.T) {
	cs := shared.Clusters[0].Client()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	node, err := forgeNode(NodePool{Prefix: "reinit", Count: 1, CPU: "1", Memory: "1Gi", EphemeralStorage: "10Gi", Pods: 10}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{}) })

	hasIP := func(n *corev1.Node) bool {
		return slices.Contains(n.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: kwokNodeIP})
	}
	// ready reads the node: whether it is Ready and, for the wait's
	// report, what it shows.
	ready := func() (*corev1.Node, bool, error) {
		n, err := cs.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
		if err != nil {
			return nil, false, err
		}
		return n, NodeReady(n), fmt.Errorf("Ready %s, addresses %v", NodeCondition(n, corev1.NodeReady), n.Status.Addresses)
	}
	harness.Eventually(ctx, t, "the node Ready with its InternalIP", func() (bool, error) {
		n, ok, shows := ready()
		return ok && hasIP(n), shows
	})

	// What the node lifecycle controller writes when the node's Lease
	// lapses.
	patch := fmt.Sprintf(`{"status":{"conditions":[{"type":"Ready","status":"Unknown","reason":"NodeStatusUnknown","message":"Kubelet stopped posting node status.","lastHeartbeatTime":%q,"lastTransitionTime":%q}]}}`,
		time.Now().UTC().Format(time.RFC3339), time.Now().UTC().Format(time.RFC3339))
	if _, err := cs.CoreV1().Nodes().Patch(ctx, node.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	// kwok initializes it again at once: Ready again (the patch left it
	// Unknown until then), and with the address.
	var n *corev1.Node
	harness.Eventually(ctx, t, "the node initialized again", func() (bool, error) {
		var ok bool
		var shows error
		if n, ok, shows = ready(); ok && !hasIP(n) {
			t.Fatalf("node %s initialized again without its InternalIP: %v", node.Name, shows)
		}
		return ok, shows
	})
	t.Logf("node %s initialized again: addresses %v", n.Name, n.Status.Addresses)
}
