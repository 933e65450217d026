// Package gate places, on the consumer, the pods the webhook held with the
// placement scheduling gate (consts.PlacementGate): each is checked against
// the fit summary of every provider whose virtual node it could go to,
// less what this controller let through and the provider has not counted
// yet, and its node affinity narrowed to the virtual nodes that fit; then
// the gate goes and the stock scheduler does the rest. A pod that fits on
// no provider and cannot run locally stays held, and says why.
package gate

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/record"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/source"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/kit"
	"github.com/liqo-go/liqo/pkg/placement/fit"
)

// ReasonNoProviderFits is the Event reason of a held pod no provider can
// run.
const ReasonNoProviderFits = "NoProviderFits"

// maxHold bounds how long a pod let through is counted against a
// provider's summary when the summary never shows it (a change below its
// rounding).
const maxHold = 30 * time.Second

// Reconciler places the held pods. Every change of a held pod, a
// ResourceSlice (its summary) or a node places them all again, oldest
// first, so that a burst is placed in order, one reservation after the
// other.
type Reconciler struct {
	Client client.Client
	// API reads the pods let through from the API server: they leave the
	// cache of held pods, and the manager's own cache holds none of a
	// user's pods.
	API      client.Reader
	Recorder record.EventRecorder

	held cache.Cache
	mu   sync.Mutex
	// reserved are the pods let through towards virtual nodes, by UID,
	// until their provider's summary counts them.
	reserved map[string]*reservation
}

// reservation is a pod let through: its requests count against each
// provider it may go to, until it is bound (then only its own) and that
// provider's summary is newer than the binding.
type reservation struct {
	pod       client.ObjectKey
	requests  corev1.ResourceList
	providers []string
	since     time.Time
	boundTo   string
	boundSeen time.Time
}

// SetupWithManager starts the controller and its cache of held pods.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	sel := labels.SelectorFromSet(labels.Set{consts.PlacementLabel: "pending"})
	c, err := cache.New(mgr.GetConfig(), cache.Options{Scheme: mgr.GetScheme(), ByObject: map[client.Object]cache.ByObject{
		&corev1.Pod{}: {Label: sel},
	}})
	if err != nil {
		return fmt.Errorf("held pods cache: %w", err)
	}
	if err := mgr.Add(c); err != nil {
		return err
	}
	r.held, r.reserved = c, map[string]*reservation{}
	if r.API == nil {
		r.API = mgr.GetAPIReader()
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorderFor("liqo-placement")
	}
	return ctrl.NewControllerManagedBy(mgr).Named("placement-gate").
		WatchesRawSource(source.Kind(c, &corev1.Pod{}, kit.EnqueueAll[*corev1.Pod]())).
		Watches(&authv1beta1.ResourceSlice{}, kit.EnqueueAll[client.Object]()).
		Watches(&corev1.Node{}, kit.EnqueueAll[client.Object]()).
		Complete(r)
}

// Reconcile places every held pod.
func (r *Reconciler) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var pods corev1.PodList
	if err := r.held.List(ctx, &pods); err != nil {
		return ctrl.Result{}, err
	}
	var nodes corev1.NodeList
	if err := r.Client.List(ctx, &nodes); err != nil {
		return ctrl.Result{}, err
	}
	summaries, err := r.summaries(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	held := slices.DeleteFunc(pods.Items, func(p corev1.Pod) bool { return !gated(&p) || !p.DeletionTimestamp.IsZero() })
	slices.SortStableFunc(held, func(a, b corev1.Pod) int { return a.CreationTimestamp.Compare(b.CreationTimestamp.Time) })
	// Placed first, released after: release reads each reservation's pod
	// from the API server, which a new pod should not wait for. Placing
	// against reservations not yet released errs on the side of holding;
	// a pod held so is placed again at once when a release freed room.
	held, err = r.placeAll(ctx, held, nodes.Items, summaries)
	if err != nil {
		return ctrl.Result{}, err
	}
	reservations := len(r.reserved)
	if err := r.release(ctx, summaries); err != nil {
		return ctrl.Result{}, err
	}
	if len(held) > 0 && len(r.reserved) < reservations {
		if held, err = r.placeAll(ctx, held, nodes.Items, summaries); err != nil {
			return ctrl.Result{}, err
		}
	}
	if len(held) > 0 || len(r.reserved) > 0 {
		// Summaries change on the provider's side: look again.
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	return ctrl.Result{}, nil
}

// placeAll places the held pods in order and returns those still held.
func (r *Reconciler) placeAll(ctx context.Context, held []corev1.Pod, nodes []corev1.Node, summaries map[string]*authv1beta1.FitSummary) ([]corev1.Pod, error) {
	var still []corev1.Pod
	for i := range held {
		placed, err := r.place(ctx, &held[i], nodes, summaries)
		if err != nil {
			return nil, err
		}
		if !placed {
			still = append(still, held[i])
		}
	}
	return still, nil
}

// summaries are the fit summaries of the providers, by cluster ID: the
// newest of each provider's accepted slices (they carry the same one).
func (r *Reconciler) summaries(ctx context.Context) (map[string]*authv1beta1.FitSummary, error) {
	var slices authv1beta1.ResourceSliceList
	if err := r.Client.List(ctx, &slices); err != nil {
		return nil, err
	}
	out := map[string]*authv1beta1.FitSummary{}
	for i := range slices.Items {
		s := &slices.Items[i]
		if s.Labels[consts.ReplicationLabel] != "" || s.Spec.ProviderClusterID == nil || s.Status.Fit == nil {
			continue
		}
		id := string(*s.Spec.ProviderClusterID)
		if cur := out[id]; cur == nil || cur.UpdateTime.Before(&s.Status.Fit.UpdateTime) {
			out[id] = s.Status.Fit
		}
	}
	return out, nil
}

// place decides one held pod: it returns false when the pod stays held.
func (r *Reconciler) place(ctx context.Context, pod *corev1.Pod, nodes []corev1.Node, summaries map[string]*authv1beta1.FitSummary) (bool, error) {
	requests := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	required := nodeaffinity.GetRequiredNodeAffinity(pod)
	var fitting, unfit, chunks []string
	providers := map[string]bool{}
	local := false
	for i := range nodes {
		n := &nodes[i]
		if !schedulable(pod, n, required) {
			continue
		}
		if n.Labels[consts.TypeLabel] != consts.TypeVirtualNode {
			local = true
			continue
		}
		provider := n.Labels[consts.RemoteClusterIDLabel]
		summary := summaries[provider]
		if summary == nil || fit.Fits(r.withReservations(summary, provider), requests, pod.Spec.Tolerations) {
			// A provider that publishes no summary is taken at its word.
			fitting = append(fitting, n.Name)
			providers[provider] = true
			continue
		}
		unfit = append(unfit, n.Name)
		chunks = append(chunks, fmt.Sprintf("%s: %s", provider, fit.Describe(fit.Only(summary.Largest(), requests))))
	}
	if len(fitting) == 0 && !local {
		msg := fmt.Sprintf("no provider has a node this pod fits on (it requests %s; each provider's largest free piece: %s)",
			fit.Describe(requests), strings.Join(chunks, "; "))
		if len(chunks) == 0 {
			msg = "no node, local or virtual, matches the pod's node selector, affinity and tolerations"
		}
		return false, r.hold(ctx, pod, msg)
	}
	if err := r.letGo(ctx, pod, unfit); err != nil {
		return false, err
	}
	if len(fitting) > 0 {
		r.reserved[string(pod.UID)] = &reservation{pod: client.ObjectKeyFromObject(pod), requests: requests,
			providers: slices.Sorted(maps.Keys(providers)), since: time.Now()}
	}
	if len(fitting) == 0 && len(chunks) > 0 {
		r.Recorder.Eventf(pod, corev1.EventTypeNormal, ReasonNoProviderFits,
			"no provider has a node this pod fits on, so it runs locally (each provider's largest free piece: %s)", strings.Join(chunks, "; "))
	}
	return true, nil
}

// hold keeps pod gated, saying why once (annotation and Event).
func (r *Reconciler) hold(ctx context.Context, pod *corev1.Pod, msg string) error {
	if pod.Annotations[consts.PlacementAnnotation] == msg {
		return nil
	}
	patch := client.MergeFrom(pod.DeepCopy())
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[consts.PlacementAnnotation] = msg
	if err := r.Client.Patch(ctx, pod, patch); err != nil {
		return client.IgnoreNotFound(err)
	}
	r.Recorder.Event(pod, corev1.EventTypeWarning, ReasonNoProviderFits, msg)
	return nil
}

// letGo lets pod go: its gate and mark removed, the virtual nodes it
// does not fit on excluded from its required node affinity (ANDed into
// each of its terms: all a gated pod's affinity may gain).
func (r *Reconciler) letGo(ctx context.Context, pod *corev1.Pod, unfit []string) error {
	before := pod.DeepCopy()
	pod.Spec.SchedulingGates = slices.DeleteFunc(pod.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == consts.PlacementGate })
	delete(pod.Labels, consts.PlacementLabel)
	delete(pod.Annotations, consts.PlacementAnnotation)
	if len(unfit) > 0 {
		Exclude(&pod.Spec, unfit)
	}
	if err := r.Client.Patch(ctx, pod, client.StrategicMergeFrom(before)); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("letting pod %s go: %w", client.ObjectKeyFromObject(pod), err)
	}
	return nil
}

// Exclude keeps spec's pod off the nodes named: metadata.name NotIn names,
// ANDed into each term of its required node affinity (the one term, if it
// has none).
func Exclude(spec *corev1.PodSpec, names []string) {
	notIn := corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: names}
	if spec.Affinity == nil {
		spec.Affinity = &corev1.Affinity{}
	}
	if spec.Affinity.NodeAffinity == nil {
		spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	req := spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	if req == nil || len(req.NodeSelectorTerms) == 0 {
		spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{notIn}}}}
		return
	}
	for i := range req.NodeSelectorTerms {
		req.NodeSelectorTerms[i].MatchFields = append(req.NodeSelectorTerms[i].MatchFields, notIn)
	}
}

// withReservations is summary less what the pods let through towards
// provider take, each placed first-fit on the summary's nodes.
func (r *Reconciler) withReservations(summary *authv1beta1.FitSummary, provider string) *authv1beta1.FitSummary {
	var mine []corev1.ResourceList
	for _, res := range r.reserved {
		if slices.Contains(res.providers, provider) {
			mine = append(mine, res.requests)
		}
	}
	if len(mine) == 0 {
		return summary
	}
	return fit.Reserve(summary, mine)
}

// release forgets the reservations the summaries now count: the pod gone,
// bound to a local node, or bound to a virtual node whose provider's
// summary is newer than the binding by a second (the fit controller's
// interval); and any older than maxHold.
func (r *Reconciler) release(ctx context.Context, summaries map[string]*authv1beta1.FitSummary) error {
	for uid, res := range r.reserved {
		var pod corev1.Pod
		err := r.API.Get(ctx, res.pod, &pod)
		switch {
		case apierrors.IsNotFound(err) || (err == nil && string(pod.UID) != uid):
			delete(r.reserved, uid)
			continue
		case err != nil:
			return err
		}
		if time.Since(res.since) > maxHold {
			delete(r.reserved, uid)
			continue
		}
		if pod.Spec.NodeName == "" {
			continue
		}
		if res.boundTo == "" {
			res.boundTo, res.boundSeen = pod.Spec.NodeName, time.Now()
			var node corev1.Node
			err := r.Client.Get(ctx, client.ObjectKey{Name: pod.Spec.NodeName}, &node)
			provider := node.Labels[consts.RemoteClusterIDLabel]
			if err != nil || node.Labels[consts.TypeLabel] != consts.TypeVirtualNode || summaries[provider] == nil {
				// Bound to a local node, or to a provider without summary.
				delete(r.reserved, uid)
				continue
			}
			res.providers = []string{provider}
			continue
		}
		if s := summaries[res.providers[0]]; s != nil && s.UpdateTime.After(res.boundSeen.Add(time.Second)) {
			delete(r.reserved, uid)
		}
	}
	return nil
}

// schedulable tells whether pod could be scheduled on n but for
// resources: its node selector and required affinity match n, and it
// tolerates n's NoSchedule and NoExecute taints.
func schedulable(pod *corev1.Pod, n *corev1.Node, required nodeaffinity.RequiredNodeAffinity) bool {
	if ok, _ := required.Match(n); !ok {
		return false
	}
	_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(n.Spec.Taints, pod.Spec.Tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	})
	return !untolerated && !n.Spec.Unschedulable
}

func gated(pod *corev1.Pod) bool {
	return slices.ContainsFunc(pod.Spec.SchedulingGates, func(g corev1.PodSchedulingGate) bool { return g.Name == consts.PlacementGate })
}
