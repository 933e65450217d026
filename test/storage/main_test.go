// Package storage tests the storage fabric end to end on the testbed's real
// nodes: the liqo StorageClass's volumes bound on a local node (a real PVC
// of the cluster's default class behind them) and on a virtual node (a PVC
// of the provider's default class in the twin namespace), data kept across
// pod restarts by data gravity, and deleted with their PVC.
package storage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager"
	"github.com/liqo-go/liqo/pkg/liqoctl"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/testbed"
)

var (
	rome, milan *testbed.Cluster
	kubeconfigs = map[string]string{}
)

func TestMain(m *testing.M) {
	if err := testbed.RealNodesSupported(); err != nil {
		_, _ = os.Stderr.WriteString("storage tests need root: " + err.Error() + "\n")
		os.Exit(1)
	}
	testbed.Main(m, func(tb *testbed.Testbed) {
		rome, milan = tb.Cluster("rome"), tb.Cluster("milan")
		dir, err := testbed.LogDir("liqo-storage-")
		if err == nil {
			for _, c := range []*testbed.Cluster{rome, milan} {
				if err = start(c, dir); err != nil {
					break
				}
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "setting up the clusters:", err)
			tb.Stop()
			os.Exit(1)
		}
	},
		testbed.ClusterSpec{Name: "rome", RealNodes: 1, Nodes: []testbed.NodePool{{Count: 0}}},
		testbed.ClusterSpec{Name: "milan", RealNodes: 1, Nodes: []testbed.NodePool{{Count: 0}}},
	)
}

// start runs c's controller manager (storage on, as by default) until the
// process exits, logging into dir.
func start(c *testbed.Cluster, dir string) error {
	path := filepath.Join(dir, c.Name+".kubeconfig")
	if err := c.WriteKubeconfig(path); err != nil {
		return err
	}
	kubeconfigs[c.Name] = path
	f, err := os.Create(filepath.Join(dir, c.Name+"-controller-manager.log"))
	if err != nil {
		return err
	}
	o := controllermanager.DefaultOptions()
	o.ClusterID = c.Name
	o.Logger = zap.New(zap.WriteTo(f), zap.UseDevMode(true))
	go controllermanager.RunLocal(context.Background(), c.Config, o, func(err error) { o.Logger.Error(err, "controller manager stopped; restarting") })
	return factory.WaitForComponents(context.Background(), path, consts.DefaultNamespace, 2*time.Minute)
}

// run executes liqoctl in-process.
func run(ctx context.Context, args ...string) (string, error) {
	return liqoctl.Execute(ctx, args...)
}
