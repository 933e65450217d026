// Package faults injects faults into testbed clusters, by signals to the
// processes the testbed started, and checks what offloaded workloads go
// through: a provider's API server frozen (SIGSTOP) for a minute, then for
// longer than the pods' not-ready toleration. It prints the figures (time
// to reconverge, pods lost or duplicated).
package faults

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/testbed"
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
			path := filepath.Join(dir, c.Name+".kubeconfig")
			testbed.Must(tb, c.WriteKubeconfig(path))
			kubeconfigs[c.Name] = path
			f, err := os.Create(filepath.Join(dir, c.Name+"-controller-manager.log"))
			testbed.Must(tb, err)
			o := controllermanager.DefaultOptions()
			o.ClusterID = c.Name
			o.HealthCheckInterval = time.Second
			o.Logger = zap.New(zap.WriteTo(f), zap.UseDevMode(true))
			go controllermanager.RunLocal(context.Background(), c.Config, o, func(err error) { o.Logger.Error(err, "controller manager stopped; restarting") })
		}
		for _, c := range []*testbed.Cluster{rome, milan} {
			testbed.Must(tb, factory.WaitForComponents(context.Background(), kubeconfigs[c.Name], consts.DefaultNamespace, 2*time.Minute))
		}
	},
		testbed.ClusterSpec{Name: "rome", Nodes: []testbed.NodePool{{Prefix: "worker", Count: 1, CPU: "8", Memory: "32Gi", Pods: 110}}},
		testbed.ClusterSpec{Name: "milan", Nodes: []testbed.NodePool{{Prefix: "worker", Count: 2, CPU: "8", Memory: "32Gi", Pods: 110}}},
	)
}
