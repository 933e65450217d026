// Package networking tests the network fabric end to end on the testbed's
// real nodes: clusters with the same pod CIDR, our gateway and node
// agent images run by their kubelets, connected by liqoctl network connect.
package networking

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/pkg/testbed/fabricopts"
)

// podCIDR is every testbed cluster's.
var podCIDR = netip.MustParsePrefix("10.244.0.0/16")

var (
	rome, milan, paris *testbed.Cluster
	kubeconfigs        = map[string]string{}
	logDir             string
)

func TestMain(m *testing.M) {
	if err := testbed.RealNodesSupported(); err != nil {
		_, _ = os.Stderr.WriteString("network fabric tests need root: " + err.Error() + "\n")
		os.Exit(1)
	}
	// The managers run until the process exits (or a test restarts one):
	// testbed.Main stops the clusters and exits.
	testbed.Main(m, func(tb *testbed.Testbed) {
		rome, milan, paris = tb.Cluster("rome"), tb.Cluster("milan"), tb.Cluster("paris")
		var err error
		if logDir, err = testbed.LogDir("liqo-networking-"); err != nil {
			panic(err)
		}
		ctx := context.Background()
		for _, c := range []*testbed.Cluster{rome, milan, paris} {
			if err := setup(ctx, c); err != nil {
				fmt.Fprintf(os.Stderr, "setting up %s: %v\n", c.Name, err)
				tb.Stop()
				os.Exit(1)
			}
		}
	},
		testbed.ClusterSpec{Name: "rome", RealNodes: 1, Nodes: []testbed.NodePool{{Count: 0}}},
		testbed.ClusterSpec{Name: "milan", RealNodes: 1, Nodes: []testbed.NodePool{{Count: 0}}},
		// A second provider of rome's, for TestTwoProviders.
		testbed.ClusterSpec{Name: "paris", RealNodes: 1, Nodes: []testbed.NodePool{{Count: 0}}},
	)
}

// manager is a cluster's controller manager, which a test may restart.
type manager struct {
	cluster *testbed.Cluster
	o       controllermanager.Options
	stop    context.CancelFunc
	done    chan struct{}
}

var managers = map[string]*manager{}

func (m *manager) start() {
	ctx, cancel := context.WithCancel(context.Background())
	m.stop, m.done = cancel, make(chan struct{})
	go func() {
		defer close(m.done)
		controllermanager.RunLocal(ctx, m.cluster.Config, m.o, func(err error) { m.o.Logger.Error(err, "controller manager stopped; restarting") })
	}()
}

// restart stops the manager (it releases its lease) and starts it again.
func (m *manager) restart() {
	m.stop()
	<-m.done
	m.start()
}

// setup publishes the gateway and node agent images in the cluster's
// registry and runs its controller manager with networking on.
func setup(ctx context.Context, c *testbed.Cluster) error {
	path := filepath.Join(logDir, c.Name+".kubeconfig")
	if err := c.WriteKubeconfig(path); err != nil {
		return err
	}
	kubeconfigs[c.Name] = path
	// Left open until the process exits: restarted managers log there too.
	f, err := os.Create(filepath.Join(logDir, c.Name+"-controller-manager.log"))
	if err != nil {
		return err
	}
	o := controllermanager.DefaultOptions()
	o.ClusterID = c.Name
	pushCtx, cancelPush := context.WithTimeout(ctx, 10*time.Minute) // a cold build compiles both images
	defer cancelPush()
	if err := fabricopts.Enable(pushCtx, c, &o); err != nil {
		return err
	}
	o.Logger = zap.New(zap.WriteTo(f), zap.UseDevMode(true))
	m := &manager{cluster: c, o: o}
	managers[c.Name] = m
	m.start()
	return factory.WaitForComponents(ctx, path, consts.DefaultNamespace, 2*time.Minute)
}
