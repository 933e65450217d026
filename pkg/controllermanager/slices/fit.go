package slices

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	resourcehelper "k8s.io/component-helpers/resource"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/source"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/kit"
	"github.com/liqo-go/liqo/pkg/placement/fit"
)

// PublishedNodeLabels are the node labels a fit summary tells consumers:
// those pods commonly select to pick a kind of node, never the names or
// addresses of the provider's nodes.
var PublishedNodeLabels = []string{
	corev1.LabelArchStable, corev1.LabelOSStable, corev1.LabelTopologyZone, corev1.LabelTopologyRegion, corev1.LabelInstanceTypeStable,
}

// fitInterval is the least time between two summaries: a burst of pod
// changes makes one, a second later at most.
const fitInterval = time.Second

// FitReconciler publishes, on the provider, in each ResourceSlice it
// accepted (status.fit), what its nodes that may run consumers' pods can
// still take: the slice is a consumer's total, a pod needs it in one
// piece. It watches nodes and pods through a cache of its own that keeps
// of a pod only its node, phase and resource requests.
type FitReconciler struct {
	Client    client.Client
	ClusterID string
	// NodeSelector selects the nodes consumers' pods may run on (the
	// provider's offloaded-pod node selector); nil: every node.
	NodeSelector map[string]string

	cache cache.Cache
	last  time.Time
}

// SetupWithManager starts the controller and its node and pod cache.
func (r *FitReconciler) SetupWithManager(mgr ctrl.Manager) error {
	c, err := cache.New(mgr.GetConfig(), cache.Options{Scheme: mgr.GetScheme(), ByObject: map[client.Object]cache.ByObject{
		&corev1.Pod{}:  {Transform: podRequestsOnly},
		&corev1.Node{}: {Transform: nodeFitOnly},
	}})
	if err != nil {
		return fmt.Errorf("fit summary cache: %w", err)
	}
	if err := mgr.Add(c); err != nil {
		return err
	}
	r.cache = c
	// Every change makes the same summary again: one request for all.
	return ctrl.NewControllerManagedBy(mgr).Named("resourceslice-fit").
		WatchesRawSource(source.Kind(c, &corev1.Node{}, kit.EnqueueAll[*corev1.Node]())).
		WatchesRawSource(source.Kind(c, &corev1.Pod{}, kit.EnqueueAll[*corev1.Pod]())).
		Watches(&authv1beta1.ResourceSlice{}, kit.EnqueueAll[client.Object]()).
		Complete(r)
}

// Reconcile makes the summary and writes it into every accepted slice
// whose summary differs, at most once per fitInterval.
func (r *FitReconciler) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	if wait := fitInterval - time.Since(r.last); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	r.last = time.Now()
	summary, err := r.summary(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	var list authv1beta1.ResourceSliceList
	if err := r.Client.List(ctx, &list, client.MatchingLabels{consts.ReplicationLabel: "true"}); err != nil {
		return ctrl.Result{}, err
	}
	for i := range list.Items {
		s := &list.Items[i]
		if s.Spec.ProviderClusterID == nil || string(*s.Spec.ProviderClusterID) != r.ClusterID || !accepted(s) || sameFit(s.Status.Fit, &summary) {
			continue
		}
		before := s.DeepCopy()
		s.Status.Fit = summary.DeepCopy()
		if err := kit.PatchStatus(ctx, r.Client, s, before); err != nil {
			return ctrl.Result{}, fmt.Errorf("writing the fit summary of %s: %w", client.ObjectKeyFromObject(s), err)
		}
	}
	return ctrl.Result{}, nil
}

// summary is the fit summary of the nodes consumers' pods may run on.
func (r *FitReconciler) summary(ctx context.Context) (authv1beta1.FitSummary, error) {
	var nodes corev1.NodeList
	if err := r.cache.List(ctx, &nodes); err != nil {
		return authv1beta1.FitSummary{}, err
	}
	var pods corev1.PodList
	if err := r.cache.List(ctx, &pods); err != nil {
		return authv1beta1.FitSummary{}, err
	}
	return fit.Summarize(FitNodes(nodes.Items, pods.Items, r.NodeSelector), metav1.Now()), nil
}

// FitNodes is what each node that may run consumers' pods can still take:
// Ready, schedulable, not a virtual node, matching selector; its
// allocatable less the requests of the pods bound to it that have not
// ended.
func FitNodes(nodes []corev1.Node, pods []corev1.Pod, selector map[string]string) []fit.Node {
	requested := map[string]corev1.ResourceList{}
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		sum := requested[p.Spec.NodeName]
		if sum == nil {
			sum = corev1.ResourceList{}
		}
		for name, q := range resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{}) {
			total := sum[name]
			total.Add(q)
			sum[name] = total
		}
		pods := sum[corev1.ResourcePods]
		pods.Add(*resource.NewQuantity(1, resource.DecimalSI))
		sum[corev1.ResourcePods] = pods
		requested[p.Spec.NodeName] = sum
	}
	sel := labels.SelectorFromSet(selector)
	var out []fit.Node
	for i := range nodes {
		n := &nodes[i]
		if n.Labels[consts.TypeLabel] == consts.TypeVirtualNode || n.Spec.Unschedulable || !nodeReady(n) || !sel.Matches(labels.Set(n.Labels)) {
			continue
		}
		free := n.Status.Allocatable.DeepCopy()
		for name, q := range requested[n.Name] {
			if f, ok := free[name]; ok {
				f.Sub(q)
				free[name] = f
			}
		}
		published := map[string]string{}
		for _, k := range PublishedNodeLabels {
			if v, ok := n.Labels[k]; ok {
				published[k] = v
			}
		}
		out = append(out, fit.Node{Free: free, Labels: published, Taints: n.Spec.Taints})
	}
	return out
}

// sameFit compares summaries but for when they were made.
func sameFit(a, b *authv1beta1.FitSummary) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Nodes == b.Nodes && a.Omitted == b.Omitted && equality.Semantic.DeepEqual(a.Groups, b.Groups)
}

// podRequestsOnly keeps of a pod what its requests, node and phase need.
func podRequestsOnly(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	slim := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID, ResourceVersion: p.ResourceVersion}}
	slim.Spec.NodeName, slim.Spec.Overhead, slim.Spec.Resources = p.Spec.NodeName, p.Spec.Overhead, p.Spec.Resources
	slim.Spec.Containers = containerResources(p.Spec.Containers)
	slim.Spec.InitContainers = containerResources(p.Spec.InitContainers)
	slim.Status.Phase = p.Status.Phase
	return slim, nil
}

func containerResources(cs []corev1.Container) []corev1.Container {
	out := make([]corev1.Container, len(cs))
	for i, c := range cs {
		out[i] = corev1.Container{Name: c.Name, Resources: c.Resources, RestartPolicy: c.RestartPolicy}
	}
	return out
}

// nodeFitOnly keeps of a node its labels (those published and those the
// selector reads), taints, schedulability, allocatable and readiness.
func nodeFitOnly(obj any) (any, error) {
	n, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	slim := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, UID: n.UID, ResourceVersion: n.ResourceVersion, Labels: n.Labels}}
	slim.Spec.Unschedulable = n.Spec.Unschedulable
	for _, t := range n.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
			slim.Spec.Taints = append(slim.Spec.Taints, t)
		}
	}
	slim.Status.Allocatable = n.Status.Allocatable
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			slim.Status.Conditions = []corev1.NodeCondition{{Type: c.Type, Status: c.Status}}
		}
	}
	return slim, nil
}
