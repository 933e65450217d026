// Package realnodes tests the testbed's real nodes end to end: real
// containers, real packets inside a cluster and between clusters whose pod
// CIDRs overlap, cluster DNS, and the kubelet API through the API server.
package realnodes

import (
	"os"
	"testing"

	"github.com/liqo-go/liqo/pkg/testbed"
)

// east has two real nodes and a simulated one; west one real node only.
// Both use the same pod CIDR, so their pod IPs overlap for real.
var east, west *testbed.Cluster

func TestMain(m *testing.M) {
	if err := testbed.RealNodesSupported(); err != nil {
		// Not a skip that hides a failure: CI runs as root, where this
		// never happens; a developer without root learns why.
		_, _ = os.Stderr.WriteString("real-node tests need root: " + err.Error() + "\n")
		os.Exit(1)
	}
	testbed.Main(m, func(tb *testbed.Testbed) {
		east, west = tb.Cluster("east"), tb.Cluster("west")
	},
		testbed.ClusterSpec{Name: "east", RealNodes: 2, Nodes: []testbed.NodePool{{Count: 1}}},
		testbed.ClusterSpec{Name: "west", RealNodes: 1, Nodes: []testbed.NodePool{{Count: 0}}},
	)
}
