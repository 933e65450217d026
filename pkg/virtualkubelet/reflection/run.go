// Package reflection is the virtual kubelet's reflection: the local pods
// bound to a virtual node become ShadowPods in the twin namespaces on the
// provider, and the provider's pods' status flows back to them; the objects
// the pods need (ConfigMaps, Secrets, Services, EndpointSlices, Ingresses)
// are copied into the twin namespaces by one generic reflector per kind
// (resource.go), with the per-kind transformations in package forge.
//
// The twin namespaces are the provider's, whatever the number of its
// virtual nodes, so the reflection has two parts. The provider's part
// (provider.go, shared through Providers and counted by its nodes) follows
// the consumer's NamespaceMap for the provider (which twin namespaces
// exist), reflects the other kinds and keeps the ServiceAccount token
// Secrets. Each node's part (Run) watches the local pods bound to the node
// (one informer, selected by spec.nodeName) and, in each twin namespace,
// the ShadowPods and the provider's pods through the provider's shared
// caches. Every event turns into the key of a local pod, and workers bring
// that pod and its ShadowPod in line: level-triggered, so a restart or a
// lost event costs nothing but a resync.
package reflection

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/remotecluster"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/forge"
)

// DefaultWorkers is the number of pods reflected in parallel: a reflection
// mostly waits on one API call, and a Deployment brings many pods at once.
const DefaultWorkers = 32

// Config is what one virtual node's reflection needs.
type Config struct {
	// NodeName is the virtual node whose pods are reflected.
	NodeName string
	// LocalClusterID marks the ShadowPods as this cluster's.
	LocalClusterID string
	// ProviderID is the remote cluster behind the node.
	ProviderID string
	// LiqoNamespace is where this cluster's Liqo runs: never reflected,
	// as no namespace consts.ReservedNamespace names is.
	LiqoNamespace string
	// Local is the local cluster; Maps is an informer cache holding the
	// local NamespaceMaps and NamespaceOffloadings (the manager's).
	Local kubernetes.Interface
	Maps  cache.Cache
	// LocalCluster is the local cluster as a remotecluster.Cluster: its
	// namespace caches of the reflected kinds are shared by every virtual
	// node.
	LocalCluster *remotecluster.Cluster
	// Remote is the provider, reached with the consumer's identity there:
	// its client writes, and its namespace caches of the twin namespaces
	// are shared by the provider's virtual nodes.
	Remote *remotecluster.Cluster
	Scheme *runtime.Scheme
	// HostIP is shown as the local pods' host IP: the virtual node's address.
	HostIP   string
	Workers  int
	Recorder record.EventRecorder
	// Kinds are the reflected kinds besides pods (DefaultKinds when nil).
	Kinds map[string]KindOptions
	// Providers holds the provider's part of the reflection, shared with
	// the provider's other virtual nodes of the process (one of the node's
	// own when nil). The part is configured by the first node's Config:
	// the nodes of one provider must agree on all but NodeName, HostIP
	// and Workers.
	Providers *Providers
	// Fabric tells what the forge needs of the network fabric with the
	// provider (the remapping of the provider's pod addresses, the home
	// API server of offloaded pods); nil is no fabric.
	Fabric Fabric
	// UnschedulableTimeout is how long a pod may stay unschedulable on the
	// provider before it fails locally, so that its controller creates it
	// again and the placement tries another cluster
	// (never when zero).
	UnschedulableTimeout time.Duration

	// beforeReconcile, when set, runs before each reconciliation of a key
	// of kind (Pods for the pods), inside the workers' recovery: the tests'
	// way to make one object's reflection fail or panic.
	beforeReconcile func(kind string, key types.NamespacedName)
	// tokenOptions tune the token Secrets' refreshes (the tests').
	tokenOptions tokenOptions
}

// Fabric reads the state of the network fabric with the provider, at
// each use: the fabric may be connected, remapped or reset while the
// reflection runs. Addresses may be called from many goroutines; an error
// fails the reconciliation that asked, which is retried.
type Fabric interface {
	Addresses(ctx context.Context) (forge.Addresses, error)
}

// addresses is the fabric's current state (the zero Addresses without
// one).
func (r *providerReflection) addresses(ctx context.Context) (forge.Addresses, error) {
	if r.cfg.Fabric == nil {
		return forge.Addresses{}, nil
	}
	return r.cfg.Fabric.Addresses(ctx)
}

// Pods is the kind name of the pods in the reflection's logs and metrics.
const Pods = "pods"

// Run reflects the node's pods until ctx is done, with the provider's
// part of the reflection (cfg.Providers).
func Run(ctx context.Context, cfg Config) error {
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.Kinds == nil {
		cfg.Kinds = DefaultKinds()
	}
	if err := ValidateKinds(cfg.Kinds); err != nil {
		return err
	}
	if cfg.LocalCluster == nil || cfg.Remote == nil {
		return fmt.Errorf("the reflection of node %s needs both the local and the remote cluster", cfg.NodeName)
	}
	if cfg.Providers == nil {
		cfg.Providers = &Providers{}
	}
	r := &reflector{
		cfg:         cfg,
		logger:      klog.FromContext(ctx).WithValues("node", cfg.NodeName),
		queue:       newQueue[types.NamespacedName]("pods-" + cfg.NodeName),
		statusQueue: newQueue[types.NamespacedName]("pod-status-" + cfg.NodeName),
		keys:        newKeyLocks[types.NamespacedName](),
	}
	defer r.queue.ShutDown()
	defer r.statusQueue.ShutDown()

	factory := informers.NewSharedInformerFactoryWithOptions(cfg.Local, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", cfg.NodeName).String()
		}),
		informers.WithTransform(localPodCached))
	podInformer := factory.Core().V1().Pods()
	r.pods = podInformer.Lister()
	r.podsSynced = podInformer.Informer().HasSynced
	r.written = toolscache.NewIntegerResourceVersionMutationCache(r.logger, podInformer.Informer().GetStore(), nil, writtenTTL, false)
	if _, err := podInformer.Informer().AddEventHandler(onEvery(func(o client.Object) {
		r.queue.Add(client.ObjectKeyFromObject(o))
	})); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()

	// The node's handlers on the twins end with nctx, before the provider
	// may stop with the last node.
	nctx, detach := context.WithCancel(ctx)
	r.ctx = nctx
	p, leave, err := cfg.Providers.join(ctx, cfg, r)
	if err != nil {
		detach()
		return err
	}
	r.providerReflection = p
	defer leave()
	defer detach()

	if !toolscache.WaitForCacheSync(ctx.Done(), podInformer.Informer().HasSynced) {
		return nil
	}
	podErrors, podPanics := reflectionErrors.WithLabelValues(cfg.ProviderID, Pods), reflectionPanics.WithLabelValues(cfg.ProviderID, Pods)
	failed := func(key types.NamespacedName, err error) {
		if !errors.Is(err, errBackOff) {
			reportFailure(r.logger, Pods, key, err, podErrors, podPanics)
		}
	}
	var status sync.WaitGroup
	status.Go(func() { process(ctx, r.statusQueue, StatusWorkers, hooked(&r.cfg, Pods, r.reconcilePod), failed) })
	process(ctx, r.queue, cfg.Workers, hooked(&r.cfg, Pods, r.reconcilePod), failed)
	status.Wait()
	return nil
}

// writtenTTL bounds how long a written pod stands in for the cache's older
// copy: the cache catches up within a second even under a burst.
const writtenTTL = time.Minute

// StatusWorkers is the number of workers of a virtual node's status lane:
// the changes of the provider's pods (their status, mostly) are queued
// apart from the local pods' changes, so that a pod's Running reaches the
// consumer while a burst of new pods still waits for its ShadowPods; both
// lanes run the same reconcile, never at once for one pod.
const StatusWorkers = 8

// reflector is the node's part of the reflection. It embeds its
// provider's part, whose twins, kinds, token keeper and remote client it
// uses; cfg is the node's own.
type reflector struct {
	*providerReflection
	cfg Config
	// ctx is the node's: its handlers on the twins end with it.
	ctx        context.Context
	pods       corelisters.PodLister
	podsSynced toolscache.InformerSynced
	// written holds the local pods as this reflector's status writes left
	// them, until the pods' cache has caught up (localPod).
	written toolscache.MutationCache
	queue   workqueue.TypedRateLimitingInterface[types.NamespacedName]
	// statusQueue takes the keys of the provider's pods' changes (see
	// StatusWorkers); keys keeps the two lanes off one pod at a time.
	statusQueue workqueue.TypedRateLimitingInterface[types.NamespacedName]
	keys        *keyLocks[types.NamespacedName]
	logger      klog.Logger

	// deletedLocal holds, by key, the UID of a local pod deleted and not
	// yet gone from the cache, so that the events still in flight for it
	// do not delete it again (one DELETE answered 404 in three pods).
	deletedLocal sync.Map
	// otherNodes holds, by key, the UID of a local pod bound to another
	// virtual node of the provider (otherNodesPod).
	otherNodes sync.Map
}

// onEvery is an event handler calling f with the object of every add,
// update and delete, a deleted object's last state included.
func onEvery(f func(client.Object)) toolscache.ResourceEventHandlerFuncs {
	call := func(obj any) {
		if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if o, ok := obj.(client.Object); ok {
			f(o)
		}
	}
	return toolscache.ResourceEventHandlerFuncs{AddFunc: call, UpdateFunc: func(_, n any) { call(n) }, DeleteFunc: call}
}

// enqueueNamespace requeues every local pod of the node in namespace.
func (r *reflector) enqueueNamespace(namespace string) {
	pods, err := r.pods.Pods(namespace).List(labels.Everything())
	if err != nil {
		return
	}
	for _, p := range pods {
		r.queue.Add(types.NamespacedName{Namespace: p.Namespace, Name: p.Name})
	}
}

// errBackOff retries a pod with backoff without reporting an error: it
// waits on something that sends no event, such as a refused ShadowPod.
var errBackOff = errors.New("waiting")

func (r *reflector) reconcilePod(ctx context.Context, key types.NamespacedName) (time.Duration, error) {
	unlock := r.keys.lock(key)
	defer unlock()
	requeue, err := r.reconcile(ctx, key)
	if err == nil && requeue {
		err = errBackOff
	}
	return 0, err
}
