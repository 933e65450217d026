// Package faults injects faults into testbed clusters, by signals to the
// processes the testbed started, and checks what offloaded workloads go
// through: a provider's API server frozen (SIGSTOP) for a minute, then for
// longer than the pods' not-ready toleration. It prints the figures (time
// to reconverge, pods lost or duplicated).
package faults

import (
	"context"
	"testing"
	"time"

	"github.com/liqo-go/liqo/pkg/controllermanager"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/inprocess"
)

var (
	rome, milan *testbed.Cluster
	kubeconfigs = map[string]string{}
)

// TestMain starts rome (the consumer) and milan (the provider), each with
// simulated nodes and its controller manager with the default grace.
func TestMain(m *testing.M) {
	testbed.Main(m, func(tb *testbed.Testbed) {
		rome, milan = tb.Cluster("rome"), tb.Cluster("milan")
		dir, err := testbed.LogDir("liqo-faults-")
		testbed.Must(tb, err)
		for _, c := range []*testbed.Cluster{rome, milan} {
			m, err := inprocess.Start(context.Background(), c, dir, func(o *controllermanager.Options) error {
				o.HealthCheckInterval = time.Second
				return nil
			})
			testbed.Must(tb, err)
			kubeconfigs[c.Name] = m.Kubeconfig
		}
	},
		testbed.ClusterSpec{Name: "rome", Nodes: []testbed.NodePool{{Prefix: "worker", Count: 1, CPU: "8", Memory: "32Gi", Pods: 110}}},
		testbed.ClusterSpec{Name: "milan", Nodes: []testbed.NodePool{{Prefix: "worker", Count: 2, CPU: "8", Memory: "32Gi", Pods: 110}}},
	)
}
