package ipam

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	"github.com/liqo-go/liqo/deploy/charts/liqo/crds"
	"github.com/liqo-go/liqo/pkg/testbed"
)

// cl reads and writes the API server directly.
var (
	cl  client.Client
	cfg *rest.Config
)

// TestMain starts one cluster (its API server, and the garbage collector
// that deletes a Configuration's Networks) shared by the tests; each test
// runs its own manager, so that a restart is a new manager.
func TestMain(m *testing.M) {
	testbed.Main(m, func(tb *testbed.Testbed) {
		cfg = tb.Cluster("ipam").Config
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		err := crds.Install(ctx, cfg)
		if err == nil {
			cl, err = client.New(cfg, client.Options{Scheme: apis.NewScheme()})
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "installing the CRDs:", err)
			tb.Stop()
			os.Exit(1)
		}
	}, testbed.ClusterSpec{Name: "ipam", Nodes: []testbed.NodePool{{Count: 1}}})
}

// testOptions are the networks of the cluster under test: the testbed's
// own pod and service CIDRs, as every testbed cluster has.
func testOptions(namespace string) Options {
	return Options{
		PodCIDR:      netip.MustParsePrefix("10.244.0.0/16"),
		ServiceCIDR:  netip.MustParsePrefix("10.96.0.0/12"),
		ExternalCIDR: DefaultExternalCIDR,
		Reserved:     []netip.Prefix{netip.MustParsePrefix("172.31.0.0/16")},
		Namespace:    namespace,
	}
}

// startManager runs the IPAM controllers with options o until the test
// ends or stop is called; stop waits for the manager to be gone.
func startManager(t *testing.T, o Options) (stop func()) {
	t.Helper()
	mgr, err := testbed.NewManager(cfg, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := Setup(mgr, o); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	stop = func() {
		cancel()
		<-done
	}
	t.Cleanup(stop)
	return stop
}
