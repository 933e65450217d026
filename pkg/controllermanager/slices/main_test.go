package slices

import (
	"context"
	"fmt"
	"os"
	"testing"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	"github.com/liqo-go/liqo/deploy/crds"
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
		err := crds.Install(context.Background(), cfg)
		if err == nil {
			cl, err = client.New(tb.Clusters[0].Config, client.Options{Scheme: apis.NewScheme()})
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "setting up the provider:", err)
			tb.Stop()
			os.Exit(1)
		}
	}, testbed.ClusterSpec{Name: "slices", Nodes: []testbed.NodePool{{Count: 1, CPU: "8", Memory: "32Gi", Pods: 110}}})
}
