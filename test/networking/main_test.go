// Package networking tests the network fabric end to end on the testbed's
// real nodes: clusters with the same pod CIDR, our gateway and node
// agent images run by their kubelets, connected by liqoctl network connect.
package networking

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/liqo-go/liqo/pkg/controllermanager"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/pkg/testbed/fabricopts"
	"github.com/liqo-go/liqo/test/inprocess"
)

// podCIDR is every testbed cluster's here, but those of extraClusters
// may have their own.
var podCIDR = netip.MustParsePrefix("10.244.0.0/16")

var (
	rome, milan, paris *testbed.Cluster
	kubeconfigs        = map[string]string{}
	logDir             string
	// extraClusters are started beside rome, milan and paris for the
	// tests built with a tag (conformance: TestMCSConformance's oslo).
	extraClusters []testbed.ClusterSpec
	// clusters are all of them, by name.
	clusters = map[string]*testbed.Cluster{}
)

func TestMain(m *testing.M) {
	if err := testbed.RealNodesSupported(); err != nil {
		_, _ = os.Stderr.WriteString("network fabric tests need root: " + err.Error() + "\n")
		os.Exit(1)
	}
	// The managers run until the tests end (or a test restarts one), and
	// stop before the clusters.
	testbed.Main(m, func(tb *testbed.Testbed) {
		tb.BeforeStop(func() {
			for _, m := range managers {
				m.Stop()
			}
		})
		rome, milan, paris = tb.Cluster("rome"), tb.Cluster("milan"), tb.Cluster("paris")
		var err error
		logDir, err = tb.LogDir("liqo-networking-")
		testbed.Must(tb, err)
		ctx := context.Background()
		for _, c := range tb.Clusters {
			clusters[c.Name] = c
			if err := setup(ctx, c); err != nil {
				testbed.Must(tb, fmt.Errorf("%s: %w", c.Name, err))
			}
		}
	}, append([]testbed.ClusterSpec{
		{Name: "rome", RealNodes: 1, Nodes: []testbed.NodePool{{Count: 0}}},
		{Name: "milan", RealNodes: 1, Nodes: []testbed.NodePool{{Count: 0}}},
		// A second provider of rome's, for TestTwoProviders.
		{Name: "paris", RealNodes: 1, Nodes: []testbed.NodePool{{Count: 0}}},
	}, extraClusters...)...)
}

var managers = map[string]*inprocess.Manager{}

// setup runs the cluster's controller manager with networking on: the
// gateway and node agent images published in the cluster's registry.
func setup(ctx context.Context, c *testbed.Cluster) error {
	m, err := inprocess.Start(ctx, c, logDir, func(o *controllermanager.Options) error {
		pushCtx, cancel := context.WithTimeout(ctx, 10*time.Minute) // a cold build compiles both images
		defer cancel()
		return fabricopts.Enable(pushCtx, c, o)
	})
	if err != nil {
		return err
	}
	managers[c.Name], kubeconfigs[c.Name] = m, m.Kubeconfig
	return nil
}
