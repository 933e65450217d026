package slices

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/kit"
)

// Reasons of the Events and conditions the tenant state gives.
const (
	// ReasonTenantNotActive: a request waits for its Tenant to be Active.
	ReasonTenantNotActive = "TenantNotActive"
	// ReasonEvicted is on each ShadowPod a Drained tenant loses.
	ReasonEvicted = "Evicted"
	// ReasonShadowPodsEvicted is on the Drained Tenant, with the count.
	ReasonShadowPodsEvicted = "ShadowPodsEvicted"
)

// withhold answers a request of a tenant that may not negotiate: a slice
// granted before keeps its grant (and its Quota), one never granted is
// denied, and the request waits for the Tenant to be Active again.
func (r *ProviderReconciler) withhold(s *authv1beta1.ResourceSlice, t *authv1beta1.Tenant) {
	msg := fmt.Sprintf("the Tenant of consumer %s is %s (spec.tenantCondition): no more resources are granted until it is %s again",
		t.Spec.ClusterID, t.Spec.TenantCondition, authv1beta1.TenantActive)
	if accepted(s) {
		msg += "; the slice keeps its current grant"
	} else {
		kit.SetConditionOf(&s.Status.Conditions, sliceCondition,
			authv1beta1.ResourceSliceResources, authv1beta1.ResourceSliceDenied, ReasonTenantNotActive, msg, metav1.Now())
		s.Status.Resources = nil
	}
	r.Recorder.Event(s, corev1.EventTypeWarning, ReasonTenantNotActive, msg)
}

// TenantStateReconciler enforces, on the provider, what a Drained Tenant
// means for the pods it runs: its consumer's ShadowPods are evicted (deleted,
// with an Event on each and one on the Tenant), and the ones that appear
// later are too. The ShadowPod webhook refuses new ones of a Cordoned or
// Drained tenant; the ProviderReconciler grants neither more resources.
type TenantStateReconciler struct {
	Client   client.Client
	Recorder record.EventRecorder
}

// Reconcile evicts the ShadowPods of a Drained Tenant's consumer.
func (r *TenantStateReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var t authv1beta1.Tenant
	if err := r.Client.Get(ctx, req.NamespacedName, &t); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	consumer := string(t.Spec.ClusterID)
	// A Tenant outside its consumer's tenant namespace is not that
	// consumer's (the TenantReconciler refuses it): it must not evict the
	// pods of the consumer it names.
	if t.Spec.TenantCondition != authv1beta1.TenantDrained || !t.DeletionTimestamp.IsZero() ||
		consumer == "" || t.Namespace != consts.TenantNamespace(consumer) {
		return ctrl.Result{}, nil
	}
	// The webhook admits a ShadowPod in a twin namespace only with the
	// origin label of the namespace's consumer.
	var pods offv1beta1.ShadowPodList
	if err := r.Client.List(ctx, &pods, client.MatchingLabels{consts.OriginClusterIDLabel: consumer}); err != nil {
		return ctrl.Result{}, err
	}
	evicted := 0
	for i := range pods.Items {
		sp := &pods.Items[i]
		if !sp.DeletionTimestamp.IsZero() {
			continue
		}
		uid := sp.UID
		if err := r.Client.Delete(ctx, sp, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, fmt.Errorf("evicting ShadowPod %s/%s: %w", sp.Namespace, sp.Name, err)
		}
		r.Recorder.Eventf(sp, corev1.EventTypeWarning, ReasonEvicted, "evicted: the Tenant of consumer %s is %s", consumer, authv1beta1.TenantDrained)
		evicted++
	}
	if evicted > 0 {
		r.Recorder.Eventf(&t, corev1.EventTypeWarning, ReasonShadowPodsEvicted,
			"evicted %d ShadowPods of consumer %s: its Tenant is %s (spec.tenantCondition)", evicted, consumer, authv1beta1.TenantDrained)
	}
	return ctrl.Result{}, nil
}

// SetupWithManager registers the controller: Tenants, and new ShadowPods
// (one admitted an instant before the drain, or created behind the
// webhook's back) requeue their consumer's Tenants.
func (r *TenantStateReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorderFor("liqo-tenant-state")
	}
	created := predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return true },
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
	return ctrl.NewControllerManagedBy(mgr).Named("tenant-state").
		For(&authv1beta1.Tenant{}).
		Watches(&offv1beta1.ShadowPod{}, handler.EnqueueRequestsFromMapFunc(r.tenantsOf), builder.WithPredicates(created)).
		Complete(r)
}

// tenantsOf maps a ShadowPod to the Tenants of its origin consumer.
func (r *TenantStateReconciler) tenantsOf(ctx context.Context, o client.Object) []reconcile.Request {
	consumer := o.GetLabels()[consts.OriginClusterIDLabel]
	if consumer == "" {
		return nil
	}
	var list authv1beta1.TenantList
	if err := r.Client.List(ctx, &list, client.InNamespace(consts.TenantNamespace(consumer))); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}
