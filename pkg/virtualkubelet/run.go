package virtualkubelet

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/go-logr/logr"
	vknode "github.com/virtual-kubelet/virtual-kubelet/node"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"

	"github.com/liqo-go/liqo/pkg/consts"

	"github.com/liqo-go/liqo/pkg/remotecluster"
)

// fallbackKubeletVersion is shown when neither cluster tells its version.
const fallbackKubeletVersion = "v0.0.0-unknown"

// RunNode registers the virtual node (creating it, or adopting the one a
// previous run left: labels, taints and capacity from cfg win), keeps its
// status and its Lease in kube-node-lease up to date, and probes the remote
// cluster's API server every cfg.HealthCheckInterval. It blocks until ctx is
// done, then returns nil and leaves the Node in place: deleting it is the
// caller's job (DeleteNode), after RunNode has returned, since a running
// RunNode registers a deleted Node again.
//
// remote is the remote cluster's probe: only /readyz and /version are
// read. ready, if not nil, is told the Node's readiness and the
// Ready reason once the Node is registered and then whenever it flips; it
// runs on the goroutine that writes the Node's updates, so it should return
// promptly.
//
// Failures to register the Node are logged and retried with backoff. RunNode
// returns an error only for what retrying cannot fix: an invalid cfg or
// remote, or a Node of the same name that belongs to something else
// (ErrForeignNode).
func RunNode(ctx context.Context, local kubernetes.Interface, remote Probe, cfg NodeConfig, ready func(bool, string)) error {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return err
	}
	if remote == nil {
		return fmt.Errorf("virtual node %s: no probe of the remote cluster", cfg.Name)
	}
	logger := klog.FromContext(ctx).WithValues("node", cfg.Name, "remoteClusterID", cfg.RemoteClusterID)
	// The delay between two attempts to register the Node: 1 s, doubling
	// up to 30 s. Steps is unbounded so that retries never stop.
	backoff := wait.Backoff{Duration: time.Second, Factor: 2, Cap: 30 * time.Second, Steps: math.MaxInt32}
	var wake time.Duration
	// Sliding: the delay is asked for after each attempt, so it is the one
	// that attempt logged.
	err = wait.DelayFunc(func() time.Duration { return wake }).Until(ctx, true, true, func(ctx context.Context) (bool, error) {
		err := runOnce(ctx, local, remote, cfg, logger, ready)
		if ctx.Err() != nil {
			return true, nil
		}
		if errors.Is(err, ErrForeignNode) {
			return false, fmt.Errorf("virtual node %s: %w", cfg.Name, err)
		}
		wake = backoff.Step()
		logger.Error(err, "registering the virtual node; retrying", "after", wake)
		return false, nil
	})
	if ctx.Err() != nil {
		// Ending with ctx is RunNode's normal end, not an error.
		return nil
	}
	return err
}

// ErrForeignNode is returned by RunNode when a Node of the virtual node's
// name exists and is not the virtual node of the same remote cluster.
var ErrForeignNode = errors.New("a node of this name exists and is not this remote cluster's virtual node")

// runOnce registers the Node and runs the node controller until ctx is done
// (returning nil) or the controller fails to start.
func runOnce(ctx context.Context, local kubernetes.Interface, pr Probe, cfg NodeConfig, logger logr.Logger, ready func(bool, string)) error {
	p := newProvider(cfg, pr, logger)

	// A first probe, so that the Node is registered with the right
	// readiness rather than a guess corrected a moment later.
	p.check(ctx)
	if ctx.Err() != nil {
		return nil
	}
	if p.needVersion() {
		p.setFallbackVersion(localVersion(ctx, local))
	}
	p.discardChange()

	nodes := local.CoreV1().Nodes()
	if err := registerNode(ctx, nodes, p.node(), cfg.RemoteClusterID); err != nil {
		return err
	}

	leaseSeconds, renew := cfg.leaseTiming()
	nc, err := vknode.NewNodeController(p, p.node(), nodes,
		vknode.WithNodeEnableLeaseV1WithRenewInterval(local.CoordinationV1().Leases(corev1.NamespaceNodeLease), leaseSeconds, renew),
		vknode.WithNodePingInterval(cfg.HealthCheckInterval),
		vknode.WithNodeStatusUpdateInterval(cfg.StatusUpdateInterval),
		vknode.WithNodeStatusUpdateErrorHandler(func(ctx context.Context, err error) error {
			if !apierrors.IsNotFound(err) {
				return err
			}
			logger.Info("the node was deleted while running; registering it again")
			return registerNode(ctx, nodes, p.node(), cfg.RemoteClusterID)
		}),
	)
	if err != nil {
		return err
	}

	// The controller gets its own context, cancelled only once forward has
	// returned: forward may be blocked handing an update to the controller's
	// loop, which must still be there to take it.
	ncCtx, stopController := context.WithCancel(withVKLogger(context.WithoutCancel(ctx), logger))
	defer stopController()
	runErr := make(chan error, 1)
	go func() {
		// virtual-kubelet v1.11 dereferences a nil Node when a status write
		// races the API server going away; that must cost a retry, not the
		// whole controller manager.
		defer func() {
			if r := recover(); r != nil {
				runErr <- fmt.Errorf("the node controller panicked: %v", r)
			}
		}()
		runErr <- nc.Run(ncCtx)
	}()
	forwarded := make(chan struct{})
	go func() {
		defer close(forwarded)
		p.forward(ctx, nc.Ready(), nc.Done(), ready)
	}()

	stoppedEarly := false
	select {
	case <-ctx.Done():
	case err = <-runErr:
		stoppedEarly = true
	}
	<-forwarded
	stopController()
	if !stoppedEarly {
		err = <-runErr
	}
	p.close()
	return err
}

// registerNode creates the Node, or adopts an existing one by setting the
// labels and taints the node controller does not write; the controller then
// writes the status (capacity included) and drops the labels a previous run
// set and cfg no longer has.
func registerNode(ctx context.Context, nodes typedcorev1.NodeInterface, want *corev1.Node, remoteClusterID string) error {
	existing, err := nodes.Get(ctx, want.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = nodes.Create(ctx, want, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			if err != nil {
				return fmt.Errorf("creating the node: %w", err)
			}
			return nil
		}
		existing, err = nodes.Get(ctx, want.Name, metav1.GetOptions{})
	}
	if err != nil {
		return fmt.Errorf("reading the node: %w", err)
	}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if existing == nil {
			if existing, err = nodes.Get(ctx, want.Name, metav1.GetOptions{}); err != nil {
				return err
			}
		}
		if isOtherNode(existing, remoteClusterID) {
			return fmt.Errorf("node %s: %w", want.Name, ErrForeignNode)
		}
		updated, changed := adoptNode(existing, want)
		if !changed {
			return nil
		}
		_, err := nodes.Update(ctx, updated, metav1.UpdateOptions{})
		existing = nil
		return err
	})
}

// localVersion is the local API server's version, shown until the remote
// one is known: the Node then looks like the cluster's other nodes.
func localVersion(ctx context.Context, local kubernetes.Interface) string {
	if rc := local.Discovery().RESTClient(); rc != nil {
		if v, err := remotecluster.ServerVersion(ctx, rc); err == nil {
			return v
		}
	}
	return fallbackKubeletVersion
}

// DeleteNode deletes the virtual node and its Lease; either being already
// gone is not an error. It refuses to delete a Node that is not a virtual
// node. Stop RunNode for the node first, or it registers the Node again.
func DeleteNode(ctx context.Context, local kubernetes.Interface, name string) error {
	nodes := local.CoreV1().Nodes()
	node, err := nodes.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("virtual node %s: reading it: %w", name, err)
	case node.Labels[consts.TypeLabel] != consts.TypeVirtualNode:
		return fmt.Errorf("node %s is not a virtual node: not deleting it", name)
	default:
		// The UID precondition keeps a Node recreated meanwhile by someone
		// else out of harm's way.
		err := nodes.Delete(ctx, name, metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(node.UID))})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("virtual node %s: deleting it: %w", name, err)
		}
	}
	// The Lease is owned by the Node and would be garbage-collected, but
	// deleting it now leaves nothing behind for a quick re-peering to trip on.
	err = local.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("virtual node %s: deleting its lease: %w", name, err)
	}
	return nil
}
