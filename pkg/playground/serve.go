package playground

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/liqo-go/liqo/pkg/testbed"
)

// serveOptions are passed by `up` to each owner process.
type serveOptions struct {
	cluster   string
	apiPort   int
	nodes     int
	realNodes int
}

func newServeCommand(dir *string) *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:    "serve",
		Short:  "Run one playground cluster in the foreground (started by `up`)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serve(cmd.Context(), layout{*dir}, o)
		},
	}
	cmd.Flags().StringVar(&o.cluster, "cluster", "", "cluster name")
	cmd.Flags().IntVar(&o.apiPort, "api-port", 0, "API server port (0: any free port)")
	cmd.Flags().IntVar(&o.nodes, "nodes", 2, "simulated nodes")
	cmd.Flags().IntVar(&o.realNodes, "real-nodes", 0, "real nodes")
	return cmd
}

// serve starts one cluster, publishes its state and keeps it running until
// the context ends (SIGTERM from `down`), then stops it and removes its files.
func serve(ctx context.Context, l layout, o serveOptions) error {
	st := &clusterState{Name: o.cluster, PID: os.Getpid(), Phase: phaseStarting}
	if err := l.write(st); err != nil {
		return err
	}
	dataDir := filepath.Join(l.data(), o.cluster)
	_ = os.RemoveAll(dataDir) // a playground cluster always starts fresh

	pool := testbed.DefaultNodePool
	pool.Count = o.nodes
	// The clusters' owners are separate processes: naming the underlay after
	// the playground's directory puts their real nodes on one network.
	tb, err := testbed.Start(ctx, testbed.Options{Dir: l.data(), Progress: os.Stdout, Underlay: testbed.UnderlayNameFor(l.dir)},
		// With real nodes, metrics-server too: kubectl top, offloaded pods
		// and virtual nodes included.
		testbed.ClusterSpec{Name: o.cluster, APIServerPort: o.apiPort, Nodes: []testbed.NodePool{pool}, RealNodes: o.realNodes,
			MetricsServer: o.realNodes > 0})
	if err != nil {
		st.Phase, st.Error = phaseFailed, err.Error()
		_ = l.write(st)
		return err
	}
	defer func() {
		tb.Stop()
		_ = os.RemoveAll(dataDir)
		_ = os.Remove(l.kubeconfig(o.cluster))
		_ = os.Remove(l.state(o.cluster))
		fmt.Println("playground: cluster", o.cluster, "stopped")
	}()

	c := tb.Clusters[0]
	if err := c.WriteKubeconfig(l.kubeconfig(o.cluster)); err != nil {
		st.Phase, st.Error = phaseFailed, err.Error()
		_ = l.write(st)
		return err
	}
	cmCtx, stopCM := context.WithCancel(ctx)
	cmDone, networking, err := startControllerManager(cmCtx, c, l.kubeconfig(o.cluster), o.realNodes > 0)
	if err != nil {
		stopCM()
		st.Phase, st.Error = phaseFailed, err.Error()
		_ = l.write(st)
		return err
	}
	// The components stop before the cluster does, so they do not spend
	// their last seconds retrying against a dead API server.
	defer func() { stopCM(); <-cmDone }()

	st.Phase, st.Server, st.Kubeconfig, st.Networking = phaseReady, c.Server, l.kubeconfig(o.cluster), networking
	if err := l.write(st); err != nil {
		return err
	}
	fmt.Println("playground: cluster", o.cluster, "ready at", c.Server)
	<-ctx.Done()
	return nil
}
