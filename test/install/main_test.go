// Package install tests Liqo installed in the cluster as a user would run
// it: images built here and pushed to each cluster's registry, liqoctl
// install from the chart embedded in liqoctl, every component in pods on
// the real nodes; then peering, offloading, logs and exec through those
// components, and uninstall.
package install

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/liqo-go/liqo/pkg/liqoctl"
	"github.com/liqo-go/liqo/pkg/testbed"
)

// simulatedTaint keeps off milan's simulated nodes every pod that does not
// tolerate it.
var simulatedTaint = corev1.Taint{Key: "liqo.io/test-simulated", Value: "true", Effect: corev1.TaintEffectNoSchedule}

// simPoolLabel marks milan's simulated nodes, where TestHAFailover's milan
// runs its consumers' pods (offloading.nodeSelector).
const simPoolLabel = "liqo-test-pool"

var (
	rome, milan *testbed.Cluster
	kubeconfigs = map[string]string{}
	dir         string
)

func TestMain(m *testing.M) {
	if err := testbed.RealNodesSupported(); err != nil {
		_, _ = os.Stderr.WriteString("in-cluster install tests need root: " + err.Error() + "\n")
		os.Exit(1)
	}
	testbed.Main(m, func(tb *testbed.Testbed) {
		rome, milan = tb.Cluster("rome"), tb.Cluster("milan")
		var err error
		dir, err = tb.LogDir("liqo-install-")
		testbed.Must(tb, err)
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute) // a cold build compiles every image
		defer cancel()
		for _, c := range []*testbed.Cluster{rome, milan} {
			path := filepath.Join(dir, c.Name+".kubeconfig")
			err := c.WriteKubeconfig(path)
			if err == nil {
				err = c.PushComponents(ctx)
			}
			if err != nil {
				testbed.Must(tb, fmt.Errorf("%s: %w", c.Name, err))
			}
			kubeconfigs[c.Name] = path
		}
	},
		// metrics-server on both: kubectl top of an offloaded pod on rome
		// reads milan's measure of its twin (TestInstallPeerOffload).
		testbed.ClusterSpec{Name: "rome", RealNodes: 1, MetricsServer: true, Nodes: []testbed.NodePool{{Count: 0}}},
		// Simulated nodes too, for TestHAFailover's 200 pods; tainted, so that
		// nothing else (the manager, TestInstallPeerOffload's pod) lands there.
		testbed.ClusterSpec{Name: "milan", RealNodes: 1, MetricsServer: true, Nodes: []testbed.NodePool{{Prefix: "sim", Count: 2, CPU: "64", Memory: "256Gi", Pods: 250,
			Labels: map[string]string{simPoolLabel: "sim"}, Taints: []corev1.Taint{simulatedTaint}}}},
	)
}

// run runs liqoctl in this process, as a user runs it.
func run(ctx context.Context, args ...string) (string, error) {
	return liqoctl.Execute(ctx, args...)
}

// install runs liqoctl install on c with the testbed's images and the
// API server's address on the underlay (its kubeconfig names loopback,
// which peers' pods cannot reach).
func install(ctx context.Context, c *testbed.Cluster, extra ...string) (string, error) {
	args := append([]string{"install", "generic", "--kubeconfig", kubeconfigs[c.Name], "--cluster-id", c.Name,
		"--pod-cidr", c.Spec.PodCIDR, "--service-cidr", c.Spec.ServiceCIDR, "--api-server-url", c.UnderlayServer(),
		"--version", testbed.TestImageTag, "--timeout", "4m"}, extra...)
	return run(ctx, args...)
}
