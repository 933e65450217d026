package offloading

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/kit"
)

// Finalizer holds a NamespaceOffloading until its providers removed the
// twin namespaces, so that unoffloading is over when the object is gone.
const Finalizer = "offloading.liqo.io/twin-namespaces"

// DefaultGiveUpAfter is how long an unoffload waits for a provider that
// neither removes the twin namespace nor looks unreachable.
const DefaultGiveUpAfter = 2 * time.Minute

// NamespaceOffloadingReconciler is the consumer side of namespace
// offloading: for each NamespaceOffloading it labels the namespace for the
// pod webhook, selects the peered clusters, lists the namespace in the
// NamespaceMap of each selected provider (the replicator carries the maps to
// the providers, which create the twins) and reports, per cluster, what the
// providers answered.
type NamespaceOffloadingReconciler struct {
	Client    client.Client
	ClusterID string
	// LiqoNamespace is where this cluster's Liqo runs: like every
	// namespace consts.ReservedNamespace names, it is never offloaded.
	LiqoNamespace string
	Recorder      record.EventRecorder
	// GiveUpAfter bounds an unoffload's wait for one provider; zero means
	// DefaultGiveUpAfter.
	GiveUpAfter time.Duration
}

// Reconcile follows the usual order: get, finalizer, then either the
// offloading or the unoffloading, the finalizer going last.
func (r *NamespaceOffloadingReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if req.Name != offv1beta1.NamespaceOffloadingName {
		return ctrl.Result{}, nil
	}
	var nsof offv1beta1.NamespaceOffloading
	err := r.Client.Get(ctx, req.NamespacedName, &nsof)
	switch {
	case apierrors.IsNotFound(err):
		return ctrl.Result{}, r.dropStray(ctx, req.Namespace)
	case err != nil:
		return ctrl.Result{}, err
	}
	if !nsof.DeletionTimestamp.IsZero() {
		return r.reconcileDelete(ctx, &nsof)
	}
	return ctrl.Result{}, r.reconcileNormal(ctx, &nsof)
}

func (r *NamespaceOffloadingReconciler) reconcileNormal(ctx context.Context, nsof *offv1beta1.NamespaceOffloading) error {
	ns := nsof.Namespace
	// A syntax error does not depend on the nodes.
	_, selectorErr := SelectClusters(&nsof.Spec.ClusterSelector, nil)
	if err := r.patchMeta(ctx, nsof, selectorErr); err != nil {
		return err
	}
	if err := r.setSchedulingLabel(ctx, ns, true); err != nil {
		return err
	}
	nodes, err := r.virtualNodes(ctx)
	if err != nil {
		return err
	}
	selected, _ := SelectClusters(&nsof.Spec.ClusterSelector, nodes)
	remote, reason, nameErr := RemoteName(&nsof.Spec, ns, r.ClusterID)
	if consts.ReservedNamespace(ns, r.LiqoNamespace) {
		// Its Secrets are this cluster's credentials; the reflection
		// refuses it too, whatever a map says.
		reason, nameErr = ReasonReserved, fmt.Errorf("namespace %s is reserved to Kubernetes or Liqo (kube-*, liqo, liqo-tenant-*, liqo-storage and Liqo's own namespace) and is never offloaded", ns)
	}
	maps, err := r.localMaps(ctx)
	if err != nil {
		return err
	}

	peered, _ := SelectClusters(nil, nodes)
	states := map[string]clusterState{}
	for _, p := range peered {
		s := clusterState{Selected: slices.Contains(selected, p), SelectorErr: selectorErr,
			RemoteName: remote, NameReason: reason, NameErr: nameErr}
		if m := maps[p]; m != nil {
			if cur, ok := m.Status.CurrentMapping[ns]; ok {
				s.Current = &cur
			}
		}
		states[p] = s
		if s.wanted() {
			if err := r.setEntry(ctx, p, ns, remote); err != nil {
				return fmt.Errorf("listing %s in the NamespaceMap of %s: %w", ns, p, err)
			}
		}
	}
	// Clusters no longer selected, or no longer peered, lose the namespace.
	for p, m := range maps {
		if _, listed := m.Spec.DesiredMapping[ns]; listed && !states[p].wanted() {
			if err := r.dropEntry(ctx, p, ns); err != nil {
				return fmt.Errorf("removing %s from the NamespaceMap of %s: %w", ns, p, err)
			}
		}
	}
	return r.updateStatus(ctx, nsof, remote, states)
}

// reconcileDelete unoffloads: the namespace leaves every map, and the
// finalizer goes once every provider removed its twin, gave no sign of life
// or was unpeered. Dropping the entry is what removes the twin: a provider
// that is unreachable now removes it when the map reaches it again.
func (r *NamespaceOffloadingReconciler) reconcileDelete(ctx context.Context, nsof *offv1beta1.NamespaceOffloading) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(nsof, Finalizer) {
		return ctrl.Result{}, nil
	}
	ns := nsof.Namespace
	maps, err := r.localMaps(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	nodes, err := r.virtualNodes(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	giveUpAt := nsof.DeletionTimestamp.Add(r.giveUpAfter())
	var pending []string
	for _, p := range sortedKeys(maps) {
		m := maps[p]
		if _, listed := m.Spec.DesiredMapping[ns]; listed {
			if err := r.dropEntry(ctx, p, ns); err != nil {
				return ctrl.Result{}, fmt.Errorf("removing %s from the NamespaceMap of %s: %w", ns, p, err)
			}
		}
		cur, ok := m.Status.CurrentMapping[ns]
		if !ok {
			continue
		}
		if why := unreachable(p, nodes, giveUpAt); why != "" {
			r.Recorder.Eventf(nsof, corev1.EventTypeWarning, "GaveUpWaiting",
				"Not waiting for cluster %s to remove namespace %s: %s; it removes it once the NamespaceMap reaches it again", p, cur.RemoteNamespace, why)
			continue
		}
		pending = append(pending, p)
	}
	if err := r.updateTerminatingStatus(ctx, nsof, pending); err != nil {
		return ctrl.Result{}, err
	}
	if len(pending) > 0 {
		// Map updates wake us before then; this is the give-up deadline.
		return ctrl.Result{RequeueAfter: max(time.Until(giveUpAt), time.Second)}, nil
	}
	if err := r.setSchedulingLabel(ctx, ns, false); err != nil {
		return ctrl.Result{}, err
	}
	r.Recorder.Eventf(nsof, corev1.EventTypeNormal, "Unoffloaded", "Namespace %s is no longer offloaded", ns)
	patch := client.MergeFromWithOptions(nsof.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(nsof, Finalizer)
	return ctrl.Result{}, client.IgnoreNotFound(r.Client.Patch(ctx, nsof, patch))
}

// dropStray removes namespace ns, which has no NamespaceOffloading, from
// every map of ours that lists it. Only the offloading of a namespace puts
// it in a map (and takes it out before its finalizer goes), so such an
// entry is none of ours: a map in a provider's tenant namespace is within
// reach of that provider when it is our consumer too, and an entry there
// would copy the namespace's Secrets to it (issue 30). The map event that
// brought the entry is what wakes this reconcile (offloadingsOfMap).
func (r *NamespaceOffloadingReconciler) dropStray(ctx context.Context, ns string) error {
	maps, err := r.localMaps(ctx)
	if err != nil {
		return err
	}
	for _, p := range sortedKeys(maps) {
		if _, listed := maps[p].Spec.DesiredMapping[ns]; !listed {
			continue
		}
		if err := r.dropEntry(ctx, p, ns); err != nil {
			return fmt.Errorf("removing %s, which nothing offloads, from the NamespaceMap of %s: %w", ns, p, err)
		}
		r.Recorder.Eventf(maps[p], corev1.EventTypeWarning, "StrayEntryRemoved",
			"Removed namespace %s from the NamespaceMap: it has no NamespaceOffloading, so this cluster does not offload it to %s", ns, p)
	}
	return nil
}

func (r *NamespaceOffloadingReconciler) giveUpAfter() time.Duration {
	if r.GiveUpAfter > 0 {
		return r.GiveUpAfter
	}
	return DefaultGiveUpAfter
}

// unreachable says why an unoffload stops waiting for provider, or "".
func unreachable(provider string, nodes []corev1.Node, giveUpAt time.Time) string {
	var node *corev1.Node
	for i := range nodes {
		if nodes[i].Labels[consts.RemoteClusterIDLabel] == provider {
			node = &nodes[i]
		}
	}
	switch {
	case node == nil:
		return "it is no longer peered (no virtual node)"
	case !nodeReachable(node):
		return fmt.Sprintf("it is unreachable (virtual node %s is not Ready, or its network unavailable)", node.Name)
	case !time.Now().Before(giveUpAt):
		return "it did not confirm the removal in time"
	}
	return ""
}

// nodeReachable tells whether a virtual node's provider answers: the node
// is Ready and its network (the provider's) available. Within its
// unreachability grace a virtual node stays Ready but reports its network
// unavailable.
func nodeReachable(n *corev1.Node) bool {
	ready, network := false, true
	for _, c := range n.Status.Conditions {
		switch c.Type {
		case corev1.NodeReady:
			ready = c.Status == corev1.ConditionTrue
		case corev1.NodeNetworkUnavailable:
			network = c.Status != corev1.ConditionTrue
		}
	}
	return ready && network
}

// patchMeta adds the finalizer and records the selector's syntax error in
// the annotation the documentation points users to.
func (r *NamespaceOffloadingReconciler) patchMeta(ctx context.Context, nsof *offv1beta1.NamespaceOffloading, selectorErr error) error {
	before := nsof.DeepCopy()
	controllerutil.AddFinalizer(nsof, Finalizer)
	if selectorErr != nil {
		metav1.SetMetaDataAnnotation(&nsof.ObjectMeta, consts.ClusterSelectorErrorAnnotation, selectorErr.Error())
	} else {
		delete(nsof.Annotations, consts.ClusterSelectorErrorAnnotation)
	}
	if equality.Semantic.DeepEqual(before.ObjectMeta, nsof.ObjectMeta) {
		return nil
	}
	return r.Client.Patch(ctx, nsof, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

// setSchedulingLabel adds or removes the label the pod webhook keys on.
func (r *NamespaceOffloadingReconciler) setSchedulingLabel(ctx context.Context, name string, on bool) error {
	var ns corev1.Namespace
	if err := r.Client.Get(ctx, types.NamespacedName{Name: name}, &ns); err != nil {
		return client.IgnoreNotFound(err)
	}
	if (ns.Labels[consts.SchedulingEnabledLabel] == "true") == on {
		return nil
	}
	patch := client.MergeFrom(ns.DeepCopy())
	if on {
		metav1.SetMetaDataLabel(&ns.ObjectMeta, consts.SchedulingEnabledLabel, "true")
	} else {
		delete(ns.Labels, consts.SchedulingEnabledLabel)
	}
	return client.IgnoreNotFound(r.Client.Patch(ctx, &ns, patch))
}

// updateStatus writes the status computed from the clusters' states, if it
// changed, with an Event when the phase does.
func (r *NamespaceOffloadingReconciler) updateStatus(ctx context.Context, nsof *offv1beta1.NamespaceOffloading, remote string, states map[string]clusterState) error {
	now := metav1.Now()
	status := nsof.Status.DeepCopy()
	status.RemoteNamespaceName = remote
	status.RemoteNamespacesConditions = nil
	for p, s := range states {
		if status.RemoteNamespacesConditions == nil {
			status.RemoteNamespacesConditions = map[string]offv1beta1.RemoteNamespaceConditions{}
		}
		status.RemoteNamespacesConditions[p] = withTransitionTimes(clusterConditions(p, s), nsof.Status.RemoteNamespacesConditions[p], now)
	}
	status.OffloadingPhase = Phase(false, status.RemoteNamespacesConditions)
	status.ObservedGeneration = nsof.Generation
	kit.SetCondition(&status.Conditions, nsof.Generation, readyCondition(status.OffloadingPhase, status.RemoteNamespacesConditions, nil))
	return r.writeStatus(ctx, nsof, status)
}

// updateTerminatingStatus keeps the per-cluster conditions and says which
// clusters the unoffload waits for.
func (r *NamespaceOffloadingReconciler) updateTerminatingStatus(ctx context.Context, nsof *offv1beta1.NamespaceOffloading, pending []string) error {
	status := nsof.Status.DeepCopy()
	status.OffloadingPhase = offv1beta1.TerminatingOffloadingPhase
	kit.SetCondition(&status.Conditions, nsof.Generation, readyCondition(status.OffloadingPhase, status.RemoteNamespacesConditions, pending))
	return r.writeStatus(ctx, nsof, status)
}

func (r *NamespaceOffloadingReconciler) writeStatus(ctx context.Context, nsof *offv1beta1.NamespaceOffloading, status *offv1beta1.NamespaceOffloadingStatus) error {
	if status.OffloadingPhase != nsof.Status.OffloadingPhase {
		r.phaseEvent(nsof, status)
	}
	before := nsof.DeepCopy()
	nsof.Status = *status
	return kit.PatchStatus(ctx, r.Client, nsof, before)
}

// phaseEvent tells users about a new phase, with the Ready condition's
// message (which clusters, which reasons).
func (r *NamespaceOffloadingReconciler) phaseEvent(nsof *offv1beta1.NamespaceOffloading, status *offv1beta1.NamespaceOffloadingStatus) {
	var msg string
	for _, c := range status.Conditions {
		if c.Type == ReadyCondition {
			msg = c.Message
		}
	}
	switch status.OffloadingPhase {
	case offv1beta1.ReadyOffloadingPhase:
		r.Recorder.Event(nsof, corev1.EventTypeNormal, "Offloaded", msg)
	case offv1beta1.TerminatingOffloadingPhase:
		r.Recorder.Event(nsof, corev1.EventTypeNormal, "Unoffloading", msg)
	case offv1beta1.InProgressOffloadingPhase:
		r.Recorder.Event(nsof, corev1.EventTypeNormal, "InProgress", msg)
	default:
		r.Recorder.Event(nsof, corev1.EventTypeWarning, string(status.OffloadingPhase), msg)
	}
}
