package shadowendpointslice

import (
	"time"

	"context"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/kit"
)

// DefaultWorkers is the number of ShadowEndpointSlices reconciled in
// parallel when Reconciler.Workers is not set: a reconcile mostly waits on
// one API call, and a rollout updates the slices of many Services at once.
const DefaultWorkers = 16

// Reconciler keeps, for every ShadowEndpointSlice, the EndpointSlice of the
// same name and namespace, as its template says. Unlike a Pod, an
// EndpointSlice is updated in place, so a changed template, and any drift
// of the slice itself, is reverted by an update. What is shared with the
// other shadow kinds (create, collisions, conflicts, deletion, the status
// write) is kit.ShadowReconciler's; sliceKind (slice.go) holds what is the
// ShadowEndpointSlice's own.
type Reconciler struct {
	Client client.Client
	// Workers is the number of concurrent reconciles (DefaultWorkers if 0).
	Workers  int
	Recorder record.EventRecorder
}

// conflictRetry is how often a slice blocked by another EndpointSlice of
// its name is tried again: the other slice is outside the cache, so
// nothing tells us it went.
const conflictRetry = 30 * time.Second

// report records the outcome in the status, with a Warning Event when the
// ShadowEndpointSlice enters a failure the consumer's administrator has to
// look at.
func (r *Reconciler) report(ses *offv1beta1.ShadowEndpointSlice, o outcome) {
	if o.reason == "" {
		return
	}
	if o.reason != readyReason(ses) {
		switch o.reason {
		case ReasonConflict, ReasonOriginMismatch, ReasonRejected:
			r.Recorder.Event(ses, corev1.EventTypeWarning, o.reason, o.message)
		}
	}
	updateStatus(ses, o)
}

// SetupWithManager registers the controller. The manager's EndpointSlice
// cache must be restricted with EndpointSliceCache.
//
// Every update of a ShadowEndpointSlice matters (its spec, its labels and
// annotations, which the slice copies, and its status: kit.PatchStatus compares
// with the cache, which can be a write behind, and the reconcile that
// follows the write's arrival corrects a status decided on that stale
// view), and so does every update of an owned slice (drift).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil {
		r.Client = mgr.GetClient()
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorderFor("liqo-shadowendpointslice")
	}
	workers := r.Workers
	if workers <= 0 {
		workers = DefaultWorkers
	}
	return ctrl.NewControllerManagedBy(mgr).Named("shadowendpointslice").
		For(&offv1beta1.ShadowEndpointSlice{}).
		Owns(&discoveryv1.EndpointSlice{}).
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.inNamespace), builder.WithPredicates(originLabelsChanged)).
		Watches(&netv1beta1.Configuration{}, handler.EnqueueRequestsFromMapFunc(r.ofConsumer)).
		WithOptions(controller.Options{MaxConcurrentReconciles: workers}).
		Complete(&kit.ShadowReconciler[*offv1beta1.ShadowEndpointSlice, *discoveryv1.EndpointSlice]{
			Client: r.Client, APIReader: mgr.GetAPIReader(), Kind: sliceKind{r},
			// Withdrawn endpoints must stop receiving traffic at once.
			DeleteWithShadow: true,
			ConflictRetry:    conflictRetry,
		})
}

// inNamespace lists the ShadowEndpointSlices of a namespace whose origin
// labels changed: whether they may have a slice changed with them.
func (r *Reconciler) inNamespace(ctx context.Context, ns client.Object) []reconcile.Request {
	return r.requests(ctx, "of a relabelled namespace", client.InNamespace(ns.GetName()))
}

// requests lists the ShadowEndpointSlices selected by opts as requests.
func (r *Reconciler) requests(ctx context.Context, what string, opts ...client.ListOption) []reconcile.Request {
	var list offv1beta1.ShadowEndpointSliceList
	if err := r.Client.List(ctx, &list, opts...); err != nil {
		log.FromContext(ctx).Error(err, "listing the ShadowEndpointSlices "+what)
		return nil
	}
	reqs := make([]reconcile.Request, len(list.Items))
	for i := range list.Items {
		reqs[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])}
	}
	return reqs
}

// ofConsumer lists the ShadowEndpointSlices of the consumer a
// Configuration is about: the translation of their addresses follows it.
func (r *Reconciler) ofConsumer(ctx context.Context, cfg client.Object) []reconcile.Request {
	return r.requests(ctx, "of peer "+cfg.GetName(), client.MatchingLabels{consts.OriginClusterIDLabel: cfg.GetName()})
}

// originLabelsChanged lets through the namespace updates that change what
// originMismatch reads. Namespace creations are left out: a new namespace
// has no ShadowEndpointSlice yet, and at start every ShadowEndpointSlice is
// reconciled anyway.
var originLabelsChanged = predicate.Funcs{
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, n := e.ObjectOld.GetLabels(), e.ObjectNew.GetLabels()
		return o[consts.TwinNamespaceLabel] != n[consts.TwinNamespaceLabel] ||
			o[consts.RemoteClusterIDLabel] != n[consts.RemoteClusterIDLabel]
	},
}
