package slices

import (
	"context"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/testbed"
)

// cl is an admin client of the provider cluster the reconciler tests run
// against: one 8-CPU node, so 4 CPUs to share at the default 50%; cfg is
// its configuration, for the tests that run a manager.
var (
	cl  client.Client
	cfg *rest.Config
)

func TestMain(m *testing.M) {
	testbed.Main(m, func(tb *testbed.Testbed) {
		cfg = tb.Clusters[0].Config
		var err error
		cl, err = tb.Clusters[0].WithCRDs(context.Background())
		testbed.Must(tb, err)
	}, testbed.ClusterSpec{Name: "slices", Nodes: []testbed.NodePool{{Count: 1, CPU: "8", Memory: "32Gi", Pods: 110}}})
}
