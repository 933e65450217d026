// Package inprocess runs our controller manager inside a test process,
// against a testbed cluster, as the end-to-end test packages do: its
// cluster's kubeconfig and its log in the package's log directory, and a
// restart for the tests that need one.
package inprocess

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/testbed"
)

// Manager is a cluster's controller manager running in this process.
type Manager struct {
	Cluster *testbed.Cluster
	// Kubeconfig is the cluster's admin kubeconfig, written in the log
	// directory, for liqoctl.
	Kubeconfig string
	Options    controllermanager.Options
	stop       context.CancelFunc
	done       chan struct{}
}

// Start writes c's kubeconfig into dir, runs its controller manager
// (controllermanager.DefaultOptions for c, adjusted by configure when set)
// with its log in dir/<cluster>-controller-manager.log, restarting it if
// it fails, and waits until it holds its lease.
func Start(ctx context.Context, c *testbed.Cluster, dir string, configure func(*controllermanager.Options) error) (*Manager, error) {
	m := &Manager{Cluster: c, Kubeconfig: filepath.Join(dir, c.Name+".kubeconfig")}
	if err := c.WriteKubeconfig(m.Kubeconfig); err != nil {
		return nil, err
	}
	// Left open until the process exits: a restarted manager logs there too.
	f, err := os.Create(filepath.Join(dir, c.Name+"-controller-manager.log"))
	if err != nil {
		return nil, err
	}
	m.Options = controllermanager.DefaultOptions()
	m.Options.ClusterID = c.Name
	if configure != nil {
		if err := configure(&m.Options); err != nil {
			return nil, err
		}
	}
	m.Options.Logger = zap.New(zap.WriteTo(f), zap.UseDevMode(true))
	m.run()
	return m, factory.WaitForComponents(ctx, m.Kubeconfig, consts.DefaultNamespace, 2*time.Minute)
}

func (m *Manager) run() {
	ctx, cancel := context.WithCancel(context.Background())
	m.stop, m.done = cancel, make(chan struct{})
	go func() {
		defer close(m.done)
		controllermanager.RunLocal(ctx, m.Cluster.Config, m.Options, func(err error) {
			m.Options.Logger.Error(err, "controller manager stopped; restarting")
		})
	}()
}

// Restart stops the manager (it releases its lease) and starts it again.
func (m *Manager) Restart() {
	m.Stop()
	m.run()
}

// Stop stops the manager and waits until it has: before its cluster
// stops, so that it does not spend its last seconds retrying an API
// server that is gone.
func (m *Manager) Stop() {
	m.stop()
	<-m.done
}
