package testbed

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
	node, err := forgeNode(NodePool{Prefix: "reinit", Count: 1, CPU: "1", Memory: "1Gi", Pods: 10}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Nodes().Delete(context.Background(), node.Name, metav1.DeleteOptions{}) })

	waitNodeState := func(what string, check func(*corev1.Node) (bool, string)) *corev1.Node {
		t.Helper()
		var last string
		for {
			n, err := cs.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
			if err == nil {
				var ok bool
				if ok, last = check(n); ok {
					return n
				}
			} else {
				last = err.Error()
			}
			select {
			case <-ctx.Done():
				t.Fatalf("node %s: %s not reached: %s", node.Name, what, last)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	internalIP := func(n *corev1.Node) (bool, string) {
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP && a.Address == kwokNodeIP {
				return NodeReady(n), fmt.Sprintf("Ready %s, addresses %v", NodeCondition(n, corev1.NodeReady), n.Status.Addresses)
			}
		}
		return false, fmt.Sprintf("Ready %s, addresses %v", NodeCondition(n, corev1.NodeReady), n.Status.Addresses)
	}
	waitNodeState("Ready with its InternalIP", internalIP)

	// What the node lifecycle controller writes when the node's Lease
	// lapses.
	patch := fmt.Sprintf(`{"status":{"conditions":[{"type":"Ready","status":"Unknown","reason":"NodeStatusUnknown","message":"Kubelet stopped posting node status.","lastHeartbeatTime":%q,"lastTransitionTime":%q}]}}`,
		time.Now().UTC().Format(time.RFC3339), time.Now().UTC().Format(time.RFC3339))
	if _, err := cs.CoreV1().Nodes().Patch(ctx, node.Name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
	// kwok initializes it again at once: Ready again, and with the address.
	n := waitNodeState("Ready again with its InternalIP", func(n *corev1.Node) (bool, string) {
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Reason == "NodeStatusUnknown" {
				return false, "not initialized again yet"
			}
		}
		if !NodeReady(n) {
			return false, "not Ready yet"
		}
		ok, s := internalIP(n)
		if !ok {
			t.Fatalf("node %s initialized again without its InternalIP: %s", node.Name, s)
		}
		return true, s
	})
	t.Logf("node %s initialized again: addresses %v", n.Name, n.Status.Addresses)
}
