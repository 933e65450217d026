package dashboard

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/liqoctl/info"
)

// source watches one context's cluster: one informer per kind the picture
// reads, with the user's own credentials, and a call of notify at every
// change. It never lists on a timer: the picture is rebuilt from the
// informers' caches when they say something changed.
type source struct {
	context string
	notify  func()

	mu         sync.Mutex
	id         string
	labels     map[string]string
	apiServer  string
	err        string
	watchError string
	cache      cache.Cache
}

// watched are the kinds a source watches, each with what the picture reads
// of it.
func watched() []client.Object {
	return []client.Object{
		&corev1beta1.ForeignCluster{}, &offv1beta1.VirtualNode{}, &offv1beta1.Quota{}, &authv1beta1.ResourceSlice{},
		&netv1beta1.Connection{}, &netv1beta1.Configuration{}, &offv1beta1.NamespaceOffloading{}, &offv1beta1.NamespaceMap{},
		&corev1.Node{}, &corev1.Pod{}, &corev1.Event{},
	}
}

// syncTimeout is how long a cluster's informers may take to list their
// kinds before the cluster is shown with the kinds that did not sync.
const syncTimeout = 30 * time.Second

// start connects to the context's cluster, reads its identity and starts
// its informers, until ctx ends. A failure is the cluster's Error, shown
// on its node of the topology, not the dashboard's end.
func (s *source) start(ctx context.Context, kubeconfig, namespace string, timeout time.Duration) {
	if err := s.run(ctx, kubeconfig, namespace, timeout); err != nil {
		s.mu.Lock()
		s.err = err.Error()
		s.mu.Unlock()
	}
	s.notify()
}

func (s *source) run(ctx context.Context, kubeconfig, namespace string, timeout time.Duration) error {
	cl := &factory.Cluster{Role: s.context, Kubeconfig: kubeconfig, Context: s.context, Namespace: namespace}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := cl.Connect(cctx, timeout); err != nil {
		return err
	}
	id, err := cl.FindComponents(cctx)
	if err != nil {
		return err
	}
	// Pods and Events are watched cluster-wide: only what the picture reads
	// of them is kept, so that the caches stay small on large clusters.
	c, err := cache.New(cl.Config, cache.Options{
		Scheme: apis.NewScheme(),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Node{}:  {Label: labels.SelectorFromSet(labels.Set{consts.TypeLabel: consts.TypeVirtualNode})},
			&corev1.Pod{}:   {Transform: trimPod},
			&corev1.Event{}: {Transform: trimEvent},
		},
		DefaultTransform: cache.TransformStripManagedFields(),
		DefaultWatchErrorHandler: func(_ context.Context, _ *toolscache.Reflector, err error) {
			s.mu.Lock()
			s.watchError = err.Error()
			s.mu.Unlock()
			s.notify()
		},
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.id, s.labels, s.apiServer, s.cache = id.ID, info.ParseLabels(id.Labels), cl.Config.Host, c
	s.mu.Unlock()
	handler := toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { s.changed() },
		UpdateFunc: func(any, any) { s.changed() },
		DeleteFunc: func(any) { s.changed() },
	}
	informers := map[string]cache.Informer{}
	for _, obj := range watched() {
		inf, err := c.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
		if err != nil {
			return fmt.Errorf("watching the %T of %s: %w", obj, id.ID, err)
		}
		if _, err := inf.AddEventHandler(handler); err != nil {
			return err
		}
		informers[fmt.Sprintf("%T", obj)] = inf
	}
	go func() { _ = c.Start(ctx) }()
	sctx, scancel := context.WithTimeout(ctx, syncTimeout)
	defer scancel()
	if !c.WaitForCacheSync(sctx) {
		var missing []string
		for name, inf := range informers {
			if !inf.HasSynced() {
				missing = append(missing, name)
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("could not list %v within %s: does your user lack the rights to list and watch them cluster-wide?", missing, syncTimeout)
	}
	return nil
}

// changed is an informer's event: the watches deliver again, so the last
// watch error is over.
func (s *source) changed() {
	s.mu.Lock()
	s.watchError = ""
	s.mu.Unlock()
	s.notify()
}

// snapshot reads the cluster's objects from the informers' caches.
func (s *source) snapshot(ctx context.Context) Snapshot {
	s.mu.Lock()
	snap := Snapshot{Context: s.context, ID: s.id, Labels: s.labels, APIServer: s.apiServer, Error: s.err, WatchError: s.watchError}
	c := s.cache
	s.mu.Unlock()
	if snap.Error != "" {
		return snap
	}
	if c == nil {
		snap.Error = "connecting"
		return snap
	}
	var (
		fcs     corev1beta1.ForeignClusterList
		vns     offv1beta1.VirtualNodeList
		quotas  offv1beta1.QuotaList
		rss     authv1beta1.ResourceSliceList
		conns   netv1beta1.ConnectionList
		cfgs    netv1beta1.ConfigurationList
		nsofs   offv1beta1.NamespaceOffloadingList
		nsmaps  offv1beta1.NamespaceMapList
		nodes   corev1.NodeList
		pods    corev1.PodList
		events  corev1.EventList
		listErr error
	)
	for _, l := range []client.ObjectList{&fcs, &vns, &quotas, &rss, &conns, &cfgs, &nsofs, &nsmaps, &nodes, &pods, &events} {
		listErr = errors.Join(listErr, c.List(ctx, l))
	}
	if listErr != nil {
		snap.Error = listErr.Error()
		return snap
	}
	snap.Objects = info.Objects{ForeignClusters: fcs.Items, VirtualNodes: vns.Items, Nodes: nodes.Items, Quotas: quotas.Items,
		ResourceSlices: rss.Items, Connections: conns.Items}
	snap.Configurations, snap.NamespaceOffloadings, snap.NamespaceMaps = cfgs.Items, nsofs.Items, nsmaps.Items
	snap.Pods, snap.Events = pods.Items, events.Items
	return snap
}

// trimPod keeps of a pod what the picture reads: its name, node, requests
// and status.
func trimPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	out := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID,
		ResourceVersion: pod.ResourceVersion, DeletionTimestamp: pod.DeletionTimestamp}}
	out.Spec.NodeName = pod.Spec.NodeName
	for _, c := range pod.Spec.Containers {
		out.Spec.Containers = append(out.Spec.Containers, corev1.Container{Name: c.Name, Resources: corev1.ResourceRequirements{Requests: c.Resources.Requests}})
	}
	st := pod.Status
	out.Status = corev1.PodStatus{Phase: st.Phase, Reason: st.Reason, Message: st.Message, Conditions: st.Conditions,
		ContainerStatuses: st.ContainerStatuses, InitContainerStatuses: st.InitContainerStatuses}
	return out, nil
}

// trimEvent keeps of an Event what the timeline shows.
func trimEvent(obj any) (any, error) {
	ev, ok := obj.(*corev1.Event)
	if !ok {
		return obj, nil
	}
	return &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: ev.Name, Namespace: ev.Namespace, UID: ev.UID, ResourceVersion: ev.ResourceVersion,
			CreationTimestamp: ev.CreationTimestamp},
		InvolvedObject: ev.InvolvedObject, Reason: ev.Reason, Message: ev.Message, Type: ev.Type, Count: ev.Count,
		LastTimestamp: ev.LastTimestamp, EventTime: ev.EventTime,
	}, nil
}
