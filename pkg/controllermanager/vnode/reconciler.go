package vnode

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/kit"
	"github.com/liqo-go/liqo/pkg/remotecluster"
	"github.com/liqo-go/liqo/pkg/virtualkubelet"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/reflection"
)

const finalizer = "liqo.io/virtual-node"

// Reconciler runs, in this process, the virtual kubelet of each VirtualNode:
// one goroutine set per node keeps the Node, its Lease and its health check.
// Running them in-process rather than as one Deployment per node saves a
// process, a client cache and a connection set per peering.
type Reconciler struct {
	Client              client.Client
	Clientset           kubernetes.Interface
	HealthCheckInterval time.Duration
	// UnreachableGrace is how long a virtual node stays Ready while its
	// provider is unreachable (virtualkubelet.NodeConfig.UnreachableGrace).
	UnreachableGrace time.Duration
	Recorder         record.EventRecorder
	// KubeletAPI gives each virtual node the endpoint of its kubelet API;
	// nil publishes none.
	KubeletAPI KubeletEndpoints
	// ClusterID is the local cluster's, which its offloaded pods carry.
	ClusterID string
	// Namespace is the components' namespace, which holds the IP of this
	// cluster's API server (the network fabric's).
	Namespace string
	// PodRecorder records the Events of the reflected pods.
	PodRecorder record.EventRecorder
	// Reflected are the kinds reflected besides pods (reflection's
	// defaults when nil).
	Reflected map[string]reflection.KindOptions
	// UnschedulableTimeout is reflection.Config's: how long a pod may stay
	// unschedulable on the provider before it fails here.
	UnschedulableTimeout time.Duration
	// Remotes gives each node the Cluster of its credentials: the nodes of
	// one provider share its clients, probe and twin namespace caches.
	Remotes *remotecluster.Registry
	// LocalCluster holds the local namespace caches the reflections share
	// (made from the manager's client when nil).
	LocalCluster *remotecluster.Cluster
	// providers holds the per-provider part of the reflections, which the
	// provider's virtual nodes share.
	providers reflection.Providers
	// cache holds the NamespaceMaps the pod reflection follows.
	cache  cache.Cache
	scheme *runtime.Scheme

	mu      sync.Mutex
	ctx     context.Context
	runners map[types.NamespacedName]*runner
	events  chan event.GenericEvent
}

// KubeletEndpoints gives each virtual node a kubelet API endpoint of its
// own (kubeletapi.Server): Open is idempotent, so a restarted node keeps
// its endpoint; Release frees it once the node is gone.
type KubeletEndpoints interface {
	Open(node string) (ip string, port int32, err error)
	Release(node string)
}

type runner struct {
	hash string
	// cluster is the provider as the node reaches it: a new Cluster (new
	// credentials) restarts the node.
	cluster *remotecluster.Cluster
	stop    context.CancelFunc
	done    chan struct{}
	ready   bool
	reason  string
	known   bool
}

// Reconcile starts, restarts or stops the node of one VirtualNode.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var vn offv1beta1.VirtualNode
	if err := r.Client.Get(ctx, req.NamespacedName, &vn); err != nil {
		if client.IgnoreNotFound(err) == nil {
			r.stopRunner(req.NamespacedName)
			if r.KubeletAPI != nil {
				r.KubeletAPI.Release(req.Name)
			}
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !vn.DeletionTimestamp.IsZero() || (vn.Spec.CreateNode != nil && !*vn.Spec.CreateNode) {
		r.stopRunner(req.NamespacedName)
		if r.KubeletAPI != nil {
			r.KubeletAPI.Release(vn.Name)
		}
		if err := virtualkubelet.DeleteNode(ctx, r.Clientset, vn.Name); err != nil {
			return ctrl.Result{}, err
		}
		if !vn.DeletionTimestamp.IsZero() && controllerutil.RemoveFinalizer(&vn, finalizer) {
			return ctrl.Result{}, r.Client.Update(ctx, &vn)
		}
		return ctrl.Result{}, nil
	}
	if controllerutil.AddFinalizer(&vn, finalizer) {
		if err := r.Client.Update(ctx, &vn); err != nil {
			return ctrl.Result{}, err
		}
	}

	remote, err := r.remoteCluster(ctx, &vn)
	if err != nil {
		return ctrl.Result{}, r.setStatus(ctx, &vn, offv1beta1.NoneVirtualNodeStatus, "NoCredentials", err.Error(), false, "")
	}
	cfg := nodeConfig(&vn, r.HealthCheckInterval)
	cfg.UnreachableGrace = r.UnreachableGrace
	if r.KubeletAPI != nil {
		if cfg.Address, cfg.Port, err = r.KubeletAPI.Open(cfg.Name); err != nil {
			// Retried with backoff: a port may free up.
			return ctrl.Result{}, errors.Join(err, r.setStatus(ctx, &vn, offv1beta1.NoneVirtualNodeStatus, "NoKubeletAPI", err.Error(), false, ""))
		}
	}
	hash := configHash(remote.Version, &cfg)
	rn := r.ensureRunner(req.NamespacedName, hash, cfg, remote)
	r.mu.Lock()
	known, ready, why := rn.known, rn.ready, rn.reason
	r.mu.Unlock()

	nodeStatus, reason := offv1beta1.CreatingVirtualNodeStatus, "WaitingForHealthCheck"
	if known {
		nodeStatus, reason = offv1beta1.RunningVirtualNodeStatus, why
		if !ready {
			nodeStatus = offv1beta1.NoneVirtualNodeStatus
		}
	}
	return ctrl.Result{}, r.setStatus(ctx, &vn, nodeStatus, reason, "", known, fmt.Sprint(ready))
}

// remoteCluster is the provider reached with the VirtualNode's credentials:
// the Cluster of the provider's Identity when the node names its Secret,
// as it does unless made by hand with other credentials.
func (r *Reconciler) remoteCluster(ctx context.Context, vn *offv1beta1.VirtualNode) (*remotecluster.Cluster, error) {
	if vn.Spec.KubeconfigSecretRef == nil {
		return nil, fmt.Errorf("spec.kubeconfigSecretRef is not set")
	}
	return r.Remotes.ForSecret(ctx, string(vn.Spec.ClusterID), types.NamespacedName{Namespace: vn.Namespace, Name: vn.Spec.KubeconfigSecretRef.Name})
}

// nodeConfig is the Node a VirtualNode asks for.
func nodeConfig(vn *offv1beta1.VirtualNode, interval time.Duration) virtualkubelet.NodeConfig {
	return virtualkubelet.NodeConfig{
		Name:                vn.Name,
		RemoteClusterID:     string(vn.Spec.ClusterID),
		Labels:              vn.Spec.Labels,
		Taints:              vn.Spec.Taints,
		Capacity:            vn.Spec.ResourceQuota.Hard,
		HealthCheckInterval: interval,
	}
}

func (r *Reconciler) ensureRunner(key types.NamespacedName, hash string, cfg virtualkubelet.NodeConfig, remote *remotecluster.Cluster) *runner {
	r.mu.Lock()
	if rn, ok := r.runners[key]; ok && rn.hash == hash && rn.cluster == remote {
		r.mu.Unlock()
		return rn
	}
	r.mu.Unlock()
	// Stop the outdated runner without holding the lock: its readiness
	// callback takes the lock, and the runner only ends once the callback
	// returned.
	r.stopRunner(key)

	r.mu.Lock()
	defer r.mu.Unlock()
	ctx, stop := context.WithCancel(r.ctx)
	rn := &runner{hash: hash, cluster: remote, stop: stop, done: make(chan struct{})}
	r.runners[key] = rn
	// New credentials, or the peering gone: the next reconcile moves the
	// node to the current Cluster, or stops it.
	go func() {
		select {
		case <-remote.Stale():
			r.enqueue(ctx, key)
		case <-ctx.Done():
		}
	}()
	go func() {
		defer close(rn.done)
		err := virtualkubelet.Run(ctx, virtualkubelet.Config{Node: cfg, Local: r.Clientset, Remote: remote,
			Reflection: reflection.Config{LocalClusterID: r.ClusterID, LiqoNamespace: r.Namespace, Local: r.Clientset, Maps: r.cache,
				LocalCluster: r.LocalCluster, Scheme: r.scheme, Recorder: r.PodRecorder, Kinds: r.Reflected, Providers: &r.providers,
				UnschedulableTimeout: r.UnschedulableTimeout,
				Fabric:               fabric{reader: r.cache, provider: cfg.RemoteClusterID, namespace: r.Namespace}},
			Ready: func(ready bool, reason string) {
				r.mu.Lock()
				rn.ready, rn.reason, rn.known = ready, reason, true
				r.mu.Unlock()
				r.enqueue(ctx, key)
			}})
		if err != nil {
			ctrl.Log.WithName("virtualnode").Error(err, "virtual node stopped", "virtualnode", key)
		}
	}()
	return rn
}

func (r *Reconciler) enqueue(ctx context.Context, key types.NamespacedName) {
	obj := &offv1beta1.VirtualNode{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	select {
	case r.events <- event.GenericEvent{Object: obj}:
	case <-ctx.Done():
	}
}

func (r *Reconciler) stopRunner(key types.NamespacedName) {
	r.mu.Lock()
	rn, ok := r.runners[key]
	delete(r.runners, key)
	r.mu.Unlock()
	if ok {
		rn.stop()
		<-rn.done
	}
}

func (r *Reconciler) setStatus(ctx context.Context, vn *offv1beta1.VirtualNode, node offv1beta1.VirtualNodeConditionStatus,
	reason, msg string, known bool, ready string) error {
	vk := offv1beta1.RunningVirtualNodeStatus
	if node == offv1beta1.NoneVirtualNodeStatus && !known {
		vk = offv1beta1.NoneVirtualNodeStatus
	}
	before := vn.DeepCopy()
	now := metav1.Now()
	changed := kit.SetConditionOf(&vn.Status.Conditions, conditionFields, offv1beta1.VirtualKubeletCondition, vk, reason, msg, now)
	if kit.SetConditionOf(&vn.Status.Conditions, conditionFields, offv1beta1.NodeCondition, node, reason, msg, now) {
		changed = true
	}
	if !changed {
		return nil
	}
	if known {
		kind := corev1.EventTypeNormal
		if ready != "true" {
			kind = corev1.EventTypeWarning
		}
		r.Recorder.Eventf(vn, kind, reason, "node %s ready=%s", vn.Name, ready)
	}
	return kit.PatchStatus(ctx, r.Client, vn, before)
}

// conditionFields opens a VirtualNode condition for kit.SetConditionOf.
func conditionFields(c *offv1beta1.VirtualNodeCondition) kit.ConditionFields[offv1beta1.VirtualNodeConditionType, offv1beta1.VirtualNodeConditionStatus] {
	return kit.ConditionFields[offv1beta1.VirtualNodeConditionType, offv1beta1.VirtualNodeConditionStatus]{
		Type: &c.Type, Status: &c.Status, Reason: &c.Reason, Message: &c.Message, LastTransitionTime: &c.LastTransitionTime}
}

// Start records the manager's context, which the node goroutines live in,
// and stops them all when it ends.
func (r *Reconciler) Start(ctx context.Context) error {
	r.mu.Lock()
	r.ctx = ctx
	r.mu.Unlock()
	<-ctx.Done()
	r.mu.Lock()
	keys := make([]types.NamespacedName, 0, len(r.runners))
	for k := range r.runners {
		keys = append(keys, k)
	}
	r.mu.Unlock()
	for _, k := range keys {
		r.stopRunner(k)
	}
	return nil
}

// SetupWithManager registers the controller; the kubeconfig Secrets requeue
// their VirtualNodes so rotated credentials restart the node.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.Recorder = mgr.GetEventRecorderFor("liqo-virtualnode")
	r.PodRecorder = mgr.GetEventRecorderFor("liqo-virtual-kubelet")
	r.cache, r.scheme = mgr.GetCache(), mgr.GetScheme()
	if r.LocalCluster == nil {
		local, err := remotecluster.New(r.ClusterID, "", mgr.GetConfig(), remotecluster.Options{Scheme: mgr.GetScheme(),
			HTTPClient: mgr.GetHTTPClient(), Mapper: mgr.GetRESTMapper()})
		if err != nil {
			return err
		}
		r.LocalCluster = local
	}
	r.runners = map[types.NamespacedName]*runner{}
	r.events = make(chan event.GenericEvent, 64)
	if err := mgr.Add(r); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).Named("virtualnode").
		For(&offv1beta1.VirtualNode{}).
		WatchesRawSource(source.Channel(r.events, &handler.EnqueueRequestForObject{})).
		Complete(r)
}

// configHash identifies what a running node was started with; a change of
// credentials or of the Node's shape restarts it.
func configHash(version string, cfg *virtualkubelet.NodeConfig) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%s|%s|%s|%v|%s:%d|", version, cfg.Name, cfg.RemoteClusterID, cfg.HealthCheckInterval, cfg.Taints, cfg.Address, cfg.Port)
	for _, k := range slices.Sorted(maps.Keys(cfg.Labels)) {
		fmt.Fprintf(&b, "%s=%s,", k, cfg.Labels[k])
	}
	for _, k := range slices.Sorted(maps.Keys(cfg.Capacity)) {
		q := cfg.Capacity[k]
		fmt.Fprintf(&b, "%s=%s,", k, q.String())
	}
	return b.String()
}
