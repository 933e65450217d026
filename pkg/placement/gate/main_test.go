package gate

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/testbed"
)

// cl is an admin client of the consumer cluster the placement tests run
// against, where the controller runs: one local node with 2 CPUs, and two
// simulated nodes standing for the virtual nodes of providers P and Q
// (16 CPUs each: the slices are large, what decides is each provider's
// fit summary).
var cl client.Client

// The providers' cluster IDs and their virtual nodes.
const (
	providerP, providerQ = "provider-p", "provider-q"
	nodeP, nodeQ         = "vn-p-0", "vn-q-0"
)

func TestMain(m *testing.M) {
	virtual := func(prefix, provider string) testbed.NodePool {
		return testbed.NodePool{Prefix: prefix, Count: 1, CPU: "16", Memory: "64Gi", EphemeralStorage: "100Gi", Pods: 110,
			Labels: map[string]string{consts.TypeLabel: consts.TypeVirtualNode, consts.RemoteClusterIDLabel: provider}}
	}
	testbed.Main(m, func(tb *testbed.Testbed) {
		ctx := context.Background()
		var err error
		cl, err = tb.Clusters[0].WithCRDs(ctx)
		testbed.Must(tb, err)
		mgr, err := testbed.NewManager(tb.Clusters[0].Config, cache.Options{})
		testbed.Must(tb, err)
		testbed.Must(tb, (&Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr))
		testbed.Must(tb, testbed.StartManager(ctx, mgr))
	}, testbed.ClusterSpec{Name: "placement", Nodes: []testbed.NodePool{
		{Prefix: "local", Count: 1, CPU: "2", Memory: "8Gi", EphemeralStorage: "100Gi", Pods: 110},
		virtual("vn-p", providerP), virtual("vn-q", providerQ),
	}})
}
