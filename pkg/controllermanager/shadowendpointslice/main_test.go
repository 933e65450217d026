package shadowendpointslice

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	"github.com/liqo-go/liqo/deploy/charts/liqo/crds"
	"github.com/liqo-go/liqo/pkg/testbed"
)

var (
	// cl is an uncached client for the tests' own reads and writes, so that
	// what they check is the API server's state, not the manager's cache.
	cl client.Client
	// provider is the cluster, for kubectl.
	provider *testbed.Cluster
)

// TestMain starts one provider cluster and, against it, a manager running
// the Reconciler with the EndpointSlice cache filtered as in production.
// The cluster's own kube-controller-manager runs too: its garbage collector
// and EndpointSlice controller are part of what is tested.
func TestMain(m *testing.M) {
	testbed.Main(m, func(tb *testbed.Testbed) {
		provider = tb.Cluster("provider")
		if err := startManager(provider.Config); err != nil {
			fmt.Fprintln(os.Stderr, "starting the manager:", err)
			tb.Stop()
			os.Exit(1)
		}
	}, testbed.ClusterSpec{Name: "provider", Nodes: []testbed.NodePool{{Count: 1}}})
}

func startManager(cfg *rest.Config) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := crds.Install(ctx, cfg); err != nil {
		return err
	}
	var err error
	if cl, err = client.New(cfg, client.Options{Scheme: apis.NewScheme()}); err != nil {
		return err
	}
	mgr, err := testbed.NewManager(cfg, cache.Options{ByObject: map[client.Object]cache.ByObject{&discoveryv1.EndpointSlice{}: EndpointSliceCache()}})
	if err != nil {
		return err
	}
	if err := (&Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return err
	}
	return testbed.StartManager(ctx, mgr)
}
