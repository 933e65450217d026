package reflection

import (
	"context"
	"sync"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/kit"
	"github.com/liqo-go/liqo/pkg/remotecluster"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/forge"
)

// twin is one twin namespace on the provider and the watches kept there.
type twin struct {
	local, remote string
	// cache holds the twin namespace's objects we made; localCache the
	// local namespace's objects of the reflected kinds.
	cache, localCache *remotecluster.NamespaceCache
	// ctx is the twin's lifetime, which stop ends.
	ctx  context.Context
	stop context.CancelFunc
	// podsSynced holds, by node (*reflector), whether the node's watches of
	// the ShadowPods and pods are synced (an *atomic.Bool); kindSynced, by
	// kind name, the watches of each reflected kind: a kind the provider
	// does not let us watch (an older provider's role) holds up only
	// itself.
	podsSynced sync.Map
	kindSynced map[string]*atomic.Bool
}

// watchMaps follows the consumer's NamespaceMap for the provider: the
// namespaces it lists as Accepted get their remote watches, the others lose
// them. The returned function removes the event handler.
func (r *providerReflection) watchMaps(ctx context.Context) (func(), error) {
	inf, err := r.cfg.Maps.GetInformer(ctx, &offv1beta1.NamespaceMap{}, cache.BlockUntilSynced(false))
	if err != nil {
		return nil, err
	}
	key := consts.NamespaceMapKey(r.cfg.ProviderID)
	reg, err := inf.AddEventHandler(onEvery(func(m client.Object) {
		if client.ObjectKeyFromObject(m) == key {
			r.syncMaps(ctx)
		}
	}))
	if err != nil {
		return nil, err
	}
	// The NamespaceOffloadings decide too (askedHere): one that goes or
	// stops selecting the provider takes its twin away.
	offInf, err := r.cfg.Maps.GetInformer(ctx, &offv1beta1.NamespaceOffloading{}, cache.BlockUntilSynced(false))
	if err != nil {
		_ = inf.RemoveEventHandler(reg)
		return nil, err
	}
	offReg, err := offInf.AddEventHandler(onEvery(func(o client.Object) {
		if o.GetName() == offv1beta1.NamespaceOffloadingName {
			r.syncMaps(ctx)
		}
	}))
	if err != nil {
		_ = inf.RemoveEventHandler(reg)
		return nil, err
	}
	// The handler's initial adds may all have come before the map exists.
	r.syncMaps(ctx)
	return func() { _ = inf.RemoveEventHandler(reg); _ = offInf.RemoveEventHandler(offReg) }, nil
}

// accepted lists the twin namespaces the provider runs for this consumer,
// by local namespace: those the map still wants and the provider reports
// Accepted.
func accepted(m *offv1beta1.NamespaceMap) map[string]string {
	out := map[string]string{}
	if !m.DeletionTimestamp.IsZero() {
		return out
	}
	for local, st := range m.Status.CurrentMapping {
		if st.Phase == offv1beta1.MappingAccepted && st.RemoteNamespace != "" && m.Spec.DesiredMapping[local] == st.RemoteNamespace {
			out[local] = st.RemoteNamespace
		}
	}
	return out
}

// askedOnly keeps of want (twins by local namespace) those this cluster's
// own offloading asked the provider for: a namespace that is not reserved
// (consts.ReservedNamespace), whose NamespaceOffloading exists and selected
// the provider. The map alone is not trusted with it: it lives in the
// provider's tenant namespace here, where the provider, as a consumer of
// this cluster in a peering both ways, has rights of its own, and its
// entries decide which namespaces' Secrets are copied to the provider
// (issue 30). Each entry refused gets a Warning Event on the map, once.
func (r *providerReflection) askedOnly(ctx context.Context, m *offv1beta1.NamespaceMap, want map[string]string) map[string]string {
	refused := map[string]string{}
	for local, remote := range want {
		var why string
		if consts.ReservedNamespace(local, r.cfg.LiqoNamespace) {
			why = "it is reserved to Kubernetes or Liqo"
		} else {
			var nsof offv1beta1.NamespaceOffloading
			err := r.cfg.Maps.Get(ctx, types.NamespacedName{Namespace: local, Name: offv1beta1.NamespaceOffloadingName}, &nsof)
			switch {
			case apierrors.IsNotFound(err):
				why = "it has no NamespaceOffloading"
			case err != nil:
				// Not known now: left out until the next event says.
				r.logger.Error(err, "reading the NamespaceOffloading", "namespace", local)
				delete(want, local)
				continue
			case !askedHere(&nsof, r.cfg.ProviderID):
				why = "its NamespaceOffloading does not select cluster " + r.cfg.ProviderID
			}
		}
		if why == "" {
			continue
		}
		delete(want, local)
		refused[local] = remote + ": " + why
	}
	r.mu.Lock()
	var fresh []string
	for local, why := range refused {
		if r.refused[local] != why {
			fresh = append(fresh, local)
		}
	}
	r.refused = refused
	r.mu.Unlock()
	for _, local := range fresh {
		r.cfg.Recorder.Eventf(m, corev1.EventTypeWarning, "NamespaceNotReflected",
			"Not reflecting namespace %s to cluster %s (twin %s), which the NamespaceMap lists: this cluster did not offload it there", local, r.cfg.ProviderID, refused[local])
	}
	return want
}

// askedHere tells whether a NamespaceOffloading selected provider, as its
// status (this cluster's offloading controller's, which no peer writes)
// says: the provider's OffloadingRequired condition is True.
func askedHere(nsof *offv1beta1.NamespaceOffloading, provider string) bool {
	for _, c := range nsof.Status.RemoteNamespacesConditions[provider] {
		if c.Type == offv1beta1.NamespaceOffloadingRequired {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (r *providerReflection) syncMaps(ctx context.Context) {
	r.syncMu.Lock()
	defer r.syncMu.Unlock()
	var m offv1beta1.NamespaceMap
	if err := r.cfg.Maps.Get(ctx, consts.NamespaceMapKey(r.cfg.ProviderID), &m); client.IgnoreNotFound(err) != nil {
		r.logger.Error(err, "reading the NamespaceMap")
		return
	}
	want := r.askedOnly(ctx, &m, accepted(&m))

	r.mu.Lock()
	var changed []string
	for local, t := range r.namespaces {
		if want[local] != t.remote {
			t.stop()
			delete(r.namespaces, local)
			changed = append(changed, local)
			// What was written there may go with the twin namespace: a
			// twin of the same name made again starts from nothing.
			r.tokens.forget(t.remote)
		}
	}
	for local, remote := range want {
		if _, ok := r.namespaces[local]; ok {
			continue
		}
		t, err := r.startTwin(ctx, local, remote)
		if err != nil {
			r.logger.Error(err, "watching the twin namespace", "namespace", local, "remote", remote)
			continue
		}
		r.namespaces[local] = t
	}
	r.mu.Unlock()
	// Pods of namespaces no longer offloaded leave their node; pods of new
	// ones are enqueued once the twin's watches are synced.
	r.mu.RLock()
	nodes := make([]*reflector, 0, len(r.nodes))
	for n := range r.nodes {
		nodes = append(nodes, n)
	}
	r.mu.RUnlock()
	for _, ns := range changed {
		for _, n := range nodes {
			n.enqueueNamespace(ns)
		}
		for _, k := range r.kinds {
			k.forget(ns)
		}
	}
}

// remotePodStatusOnly trims a provider's pod to what the reflection reads of
// it, its name, owner (the ShadowPod) and status, before the twin cache
// keeps it: the spec, the bulk of a pod, is the ShadowPod's, which the
// consumer wrote; its labels and annotations are the local pod's (the cache
// selected on ours already); managed fields nothing reads.
func remotePodStatusOnly(obj any) (any, error) {
	if p, ok := obj.(*corev1.Pod); ok {
		p.ManagedFields, p.Labels, p.Annotations, p.Spec = nil, nil, nil, corev1.PodSpec{}
	}
	return obj, nil
}

// shadowPodOrigin trims a ShadowPod's metadata to what the reflection reads
// of it: its name, UID, deletion, origin label and local UID annotation.
// The rest of its labels and annotations are the local pod's.
func shadowPodOrigin(obj any) (any, error) {
	if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
		m.ManagedFields = nil
		m.Labels = kit.OnlyKey(m.Labels, consts.OriginClusterIDLabel)
		m.Annotations = kit.OnlyKey(m.Annotations, forge.LocalUIDAnnotation)
	}
	return obj, nil
}

// twinCaches names the options of the twin namespaces' caches, the same
// for every reflection of this process (remotecluster.CacheOptions).
const twinCaches = "reflection"

// startTwin watches one twin namespace and its local namespace: on the
// provider, the ShadowPods, their pods and the copies of the reflected
// kinds (only those made by this cluster); locally, the objects of the
// reflected kinds.
func (r *providerReflection) startTwin(ctx context.Context, local, remote string) (*twin, error) {
	ours := labels.SelectorFromSet(labels.Set{consts.ManagedByLabel: consts.ManagedByValue,
		consts.OriginClusterIDLabel: r.cfg.LocalClusterID})
	managed := labels.SelectorFromSet(labels.Set{consts.ManagedByLabel: consts.ManagedByValue})
	byObject := map[client.Object]cache.ByObject{&corev1.Pod{}: {Label: managed, Transform: remotePodStatusOnly},
		shadowPodMetadata(): {Transform: shadowPodOrigin}}
	for _, k := range r.kinds {
		obj, by := k.remoteCache(ours)
		byObject[obj] = by
	}
	// Both caches are shared with the provider's other virtual nodes (the
	// local one with every virtual node): one watch per kind and namespace.
	// They are released, with this twin's handlers, when tctx ends.
	tctx, stop := context.WithCancel(ctx)
	c, err := r.cfg.Remote.NamespaceCache(tctx, remote, remotecluster.CacheOptions{Name: twinCaches, ByObject: byObject})
	if err != nil {
		stop()
		return nil, err
	}
	lc, err := r.cfg.LocalCluster.NamespaceCache(tctx, local, remotecluster.CacheOptions{Name: twinCaches})
	if err != nil {
		stop()
		return nil, err
	}
	t := &twin{local: local, remote: remote, cache: c, localCache: lc, ctx: tctx, stop: stop, kindSynced: map[string]*atomic.Bool{}}
	for n := range r.nodes {
		r.attach(n, t)
	}
	// The tokens of the pods offloaded before a restart are refreshed on
	// the Secrets' own schedule.
	go func() {
		if err := r.tokens.adopt(tctx, local, remote); err != nil && tctx.Err() == nil {
			r.logger.Error(err, "planning the token refreshes", "namespace", local)
		}
	}()
	kindSyncs := map[string][]toolscache.InformerSynced{}
	for name, k := range r.kinds {
		s, err := k.watch(tctx, t)
		if err != nil {
			stop()
			return nil, err
		}
		kindSyncs[name] = s
		t.kindSynced[name] = &atomic.Bool{}
	}
	for name, k := range r.kinds {
		go func() {
			if toolscache.WaitForCacheSync(tctx.Done(), kindSyncs[name]...) {
				t.kindSynced[name].Store(true)
				k.enqueueNamespace(tctx, t)
			}
		}()
	}
	return t, nil
}

// attach watches, for node n, the ShadowPods and the provider's pods of a
// twin, until the twin or the node goes; the node's pods of the namespace
// are enqueued once the watches are synced. r.mu is held.
func (r *providerReflection) attach(n *reflector, t *twin) {
	ctx, stop := context.WithCancel(t.ctx)
	// Ends with the node too; the hook on the node goes with the twin.
	unhook := context.AfterFunc(n.ctx, stop)
	context.AfterFunc(ctx, func() { unhook() })
	synced := &atomic.Bool{}
	t.podsSynced.Store(n, synced)
	// The provider's pods' changes go to the status lane (StatusWorkers).
	handlers := map[client.Object]toolscache.ResourceEventHandlerFuncs{
		shadowPodMetadata(): onEvery(func(o client.Object) { n.queue.Add(types.NamespacedName{Namespace: t.local, Name: o.GetName()}) }),
		&corev1.Pod{}:       onEvery(func(o client.Object) { n.statusQueue.Add(types.NamespacedName{Namespace: t.local, Name: o.GetName()}) }),
	}
	var syncs []toolscache.InformerSynced
	for kind, handler := range handlers {
		s, err := t.cache.Watch(ctx, kind, handler)
		if err != nil {
			// Not synced: the node's pods of the namespace wait, and the
			// next change of the map starts the twin again.
			r.logger.Error(err, "watching the twin namespace's pods", "namespace", t.local, "node", n.cfg.NodeName)
			stop()
			return
		}
		syncs = append(syncs, s)
	}
	go func() {
		if toolscache.WaitForCacheSync(ctx.Done(), syncs...) {
			synced.Store(true)
			n.enqueueNamespace(t.local)
		}
	}()
}

// podsReady reports whether node n's watches in the twin are synced.
func (t *twin) podsReady(n *reflector) bool {
	synced, ok := t.podsSynced.Load(n)
	return ok && synced.(*atomic.Bool).Load()
}

// kindReady reports whether a kind's watches in the twin are synced.
func (t *twin) kindReady(kind string) bool {
	ready, ok := t.kindSynced[kind]
	return ok && ready.Load()
}

// twinOf returns the twin namespace of a local namespace, if any.
func (r *providerReflection) twinOf(local string) *twin {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.namespaces[local]
}

func (r *providerReflection) stopTwins() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for local, t := range r.namespaces {
		t.stop()
		delete(r.namespaces, local)
	}
}
