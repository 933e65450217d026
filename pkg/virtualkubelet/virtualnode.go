package virtualkubelet

import (
	"context"
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/liqo-go/liqo/pkg/remotecluster"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/reflection"
)

// Config is everything one virtual node needs to run.
type Config struct {
	// Node is the Node that stands for the provider.
	Node NodeConfig
	// Local is the local cluster, where the Node and its Lease live.
	Local kubernetes.Interface
	// Remote is the provider as the node reaches it: its probe tells the
	// Node's readiness, its clients and twin namespace caches serve the
	// reflection.
	Remote *remotecluster.Cluster
	// Reflection is the reflection of the node's pods, the rest of it: its
	// NodeName, ProviderID, Remote and HostIP are Node's and Remote's.
	Reflection reflection.Config
	// Ready, if not nil, is told the Node's readiness (see RunNode).
	Ready func(ready bool, reason string)
}

// Run runs the virtual node until ctx is done: the Node, its Lease and
// its health check (RunNode) and the reflection of its pods. It returns
// once both have stopped, leaving the Node in place (DeleteNode): nil when
// ctx ended, RunNode's error when the Node cannot be run (the reflection
// is stopped with it). A reflection that cannot start is logged and leaves
// the Node running: the Node still tells the scheduler whether the
// provider is there, and the pods bound to it wait.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Remote == nil {
		return fmt.Errorf("virtual node %s: no provider cluster", cfg.Node.Name)
	}
	rc := cfg.Reflection
	rc.NodeName, rc.ProviderID, rc.Remote, rc.HostIP = cfg.Node.Name, cfg.Node.RemoteClusterID, cfg.Remote, cfg.Node.Address
	rctx, stopReflection := context.WithCancel(ctx)
	reflected := make(chan struct{})
	go func() {
		defer close(reflected)
		if err := reflection.Run(rctx, rc); err != nil && rctx.Err() == nil {
			klog.FromContext(ctx).Error(err, "the pod reflection stopped", "node", cfg.Node.Name)
		}
	}()
	err := RunNode(ctx, cfg.Local, cfg.Remote, cfg.Node, cfg.Ready)
	stopReflection()
	<-reflected
	return err
}
