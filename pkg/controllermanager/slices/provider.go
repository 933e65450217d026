package slices

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/kit"
)

// ProviderReconciler decides, on the provider, the ResourceSlices consumers
// replicated into their tenant namespaces, and keeps each accepted slice's
// Quota.
type ProviderReconciler struct {
	Client            client.Client
	ClusterID         string
	ClusterLabels     map[string]string
	SharingPercentage int
	Deny              bool
	Enforcement       offv1beta1.LimitsEnforcement
	Recorder          record.EventRecorder
	// VirtualStorageClass is this cluster's own virtual class, never
	// offered to consumers (their volumes would be offloaded again).
	VirtualStorageClass string
	// RuntimeClasses are the runtime classes this cluster offers its
	// consumers' pods, told to them in the slices' node labels.
	RuntimeClasses []string
}

// Reconcile authenticates the slice against the consumer's Tenant, decides
// its resources once per request and creates or removes its Quota.
func (r *ProviderReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var s authv1beta1.ResourceSlice
	if err := r.Client.Get(ctx, req.NamespacedName, &s); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !s.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	before := s.DeepCopy()
	consumer := ""
	if s.Spec.ConsumerClusterID != nil {
		consumer = string(*s.Spec.ConsumerClusterID)
	}

	tenant, err := r.authenticate(ctx, &s, consumer)
	if err != nil {
		kit.SetConditionOf(&s.Status.Conditions, sliceCondition,
			authv1beta1.ResourceSliceAuthentication, authv1beta1.ResourceSliceDenied, "AuthenticationFailed", err.Error(), metav1.Now())
		kit.SetConditionOf(&s.Status.Conditions, sliceCondition,
			authv1beta1.ResourceSliceResources, authv1beta1.ResourceSliceDenied, "AuthenticationFailed", "not authenticated", metav1.Now())
		s.Status.Resources = nil
		if err := r.deleteQuota(ctx, &s); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, kit.PatchStatus(ctx, r.Client, &s, before)
	}
	kit.SetConditionOf(&s.Status.Conditions, sliceCondition,
		authv1beta1.ResourceSliceAuthentication, authv1beta1.ResourceSliceAccepted, "TenantAuthenticated",
		fmt.Sprintf("consumer %s is an authenticated tenant", consumer), metav1.Now())

	// The request as decided, defaults included: a decision made before
	// unnamed resources got their defaults is made again.
	requested := authv1beta1.WithDefaultResources(s.Spec.Resources)
	decide := s.Annotations[consts.DecidedAnnotation] != authv1beta1.CanonicalResources(requested)
	if decide && !tenant.Spec.TenantCondition.Active() {
		// Not decided, so not marked decided either: the request is decided
		// once the Tenant is Active again (its change requeues the slice).
		r.withhold(&s, tenant)
		decide = false
	}
	cordoned, err := r.cordoned(ctx, &s)
	if err != nil {
		return ctrl.Result{}, err
	}
	withheld := decide && cordoned && accepted(&s)
	if withheld {
		// As for a cordoned Tenant: the grant stands, the new request waits
		// (uncordoning changes the Quota, which requeues the slice).
		decide = false
	}
	if decide {
		if err := r.decide(ctx, &s, requested); err != nil {
			return ctrl.Result{}, err
		}
	}
	r.showCordon(&s, cordoned, withheld)
	s.Status.NodeLabels = NodeLabels(r.ClusterLabels, r.RuntimeClasses)
	if s.Status.StorageClasses, err = r.storageClasses(ctx); err != nil {
		return ctrl.Result{}, err
	}

	if accepted(&s) {
		if err := r.ensureQuota(ctx, &s, consumer); err != nil {
			return ctrl.Result{}, err
		}
	} else if err := r.deleteQuota(ctx, &s); err != nil {
		return ctrl.Result{}, err
	}
	if err := kit.PatchStatus(ctx, r.Client, &s, before); err != nil || !decide {
		return ctrl.Result{}, err
	}
	// Mark the request decided only once the decision is stored: whoever sees
	// the mark (the consumer, liqoctl) can trust the status is for this
	// request. A crash in between only makes the next run decide again.
	patch := client.MergeFrom(s.DeepCopy())
	metav1.SetMetaDataAnnotation(&s.ObjectMeta, consts.DecidedAnnotation, authv1beta1.CanonicalResources(requested))
	return ctrl.Result{}, r.Client.Patch(ctx, &s, patch)
}

// authenticate accepts a slice only in the tenant namespace of the consumer
// it names, and only once that consumer's Tenant is Ready; it returns the
// Tenant.
func (r *ProviderReconciler) authenticate(ctx context.Context, s *authv1beta1.ResourceSlice, consumer string) (*authv1beta1.Tenant, error) {
	if consumer == "" {
		return nil, fmt.Errorf("spec.consumerClusterID is empty")
	}
	if want := consts.TenantNamespace(consumer); s.Namespace != want {
		return nil, fmt.Errorf("a slice of consumer %s must be in namespace %s, not %s", consumer, want, s.Namespace)
	}
	var t authv1beta1.Tenant
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: s.Namespace, Name: consumer}, &t); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("tenants.authentication.liqo.io %q not found", consumer)
		}
		return nil, err
	}
	if !meta.IsStatusConditionTrue(t.Status.Conditions, authv1beta1.ReadyCondition) {
		return nil, fmt.Errorf("the Tenant of consumer %s is not Ready", consumer)
	}
	return &t, nil
}

func (r *ProviderReconciler) decide(ctx context.Context, s *authv1beta1.ResourceSlice, requested corev1.ResourceList) error {
	var nodes corev1.NodeList
	if err := r.Client.List(ctx, &nodes); err != nil {
		return err
	}
	var quotas offv1beta1.QuotaList
	if err := r.Client.List(ctx, &quotas); err != nil {
		return err
	}
	var granted []corev1.ResourceList
	for _, q := range quotas.Items {
		if q.Namespace == s.Namespace && q.Name == s.Name {
			continue
		}
		granted = append(granted, q.Spec.Resources)
	}
	grant, ok, msg := Decide(requested, Shareable(nodes.Items, r.SharingPercentage, granted), r.Deny)
	if !ok {
		reason := "InsufficientResources"
		if Validate(requested) != nil {
			reason = "InvalidRequest"
		}
		kit.SetConditionOf(&s.Status.Conditions, sliceCondition,
			authv1beta1.ResourceSliceResources, authv1beta1.ResourceSliceDenied, reason, msg, metav1.Now())
		s.Status.Resources = nil
		r.Recorder.Event(s, corev1.EventTypeWarning, "ResourcesDenied", msg)
		return nil
	}
	kit.SetConditionOf(&s.Status.Conditions, sliceCondition,
		authv1beta1.ResourceSliceResources, authv1beta1.ResourceSliceAccepted, "ResourcesGranted", msg, metav1.Now())
	s.Status.Resources = grant
	r.Recorder.Event(s, corev1.EventTypeNormal, "ResourcesAccepted", msg)
	return nil
}

func accepted(s *authv1beta1.ResourceSlice) bool {
	for _, c := range s.Status.Conditions {
		if c.Type == authv1beta1.ResourceSliceResources {
			return c.Status == authv1beta1.ResourceSliceAccepted
		}
	}
	return false
}

func (r *ProviderReconciler) ensureQuota(ctx context.Context, s *authv1beta1.ResourceSlice, consumer string) error {
	q := &offv1beta1.Quota{ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace}}
	_, err := controllerutil.CreateOrUpdate(ctx, r.Client, q, func() error {
		q.Labels = map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.RemoteClusterIDLabel: consumer}
		q.Spec.User = consts.ConsumerUser(consumer)
		q.Spec.LimitsEnforcement = r.Enforcement
		q.Spec.Resources = s.Status.Resources
		return controllerutil.SetControllerReference(s, q, r.Client.Scheme())
	})
	return err
}

func (r *ProviderReconciler) deleteQuota(ctx context.Context, s *authv1beta1.ResourceSlice) error {
	q := &offv1beta1.Quota{ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace}}
	return client.IgnoreNotFound(r.Client.Delete(ctx, q))
}

// sliceCondition opens a slice condition for kit.SetConditionOf.
func sliceCondition(c *authv1beta1.ResourceSliceCondition) kit.ConditionFields[authv1beta1.ResourceSliceConditionType, authv1beta1.ResourceSliceConditionStatus] {
	return kit.ConditionFields[authv1beta1.ResourceSliceConditionType, authv1beta1.ResourceSliceConditionStatus]{
		Type: &c.Type, Status: &c.Status, Reason: &c.Reason, Message: &c.Message, LastTransitionTime: &c.LastTransitionTime}
}

// SetupWithManager registers the controller; Tenant changes requeue the
// slices of their namespace.
func (r *ProviderReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.Recorder = mgr.GetEventRecorderFor("liqo-resourceslice")
	theirs := predicate.NewPredicateFuncs(func(o client.Object) bool {
		s, ok := o.(*authv1beta1.ResourceSlice)
		return ok && s.Spec.ProviderClusterID != nil && string(*s.Spec.ProviderClusterID) == r.ClusterID &&
			s.Labels[consts.ReplicationLabel] == "true"
	})
	return ctrl.NewControllerManagedBy(mgr).Named("resourceslice-provider").
		For(&authv1beta1.ResourceSlice{}, builder.WithPredicates(theirs)).
		Owns(&offv1beta1.Quota{}).
		Watches(&authv1beta1.Tenant{}, handler.EnqueueRequestsFromMapFunc(replicasInNamespace(r.Client))).
		// Every slice offers the StorageClasses: a class made or removed
		// after the peering is offered, or withdrawn, at once.
		Watches(&storagev1.StorageClass{}, handler.EnqueueRequestsFromMapFunc(allReplicas(r.Client))).
		Complete(r)
}

// allReplicas maps any object to every slice consumers replicated to this
// provider.
func allReplicas(c client.Reader) handler.MapFunc {
	return func(ctx context.Context, _ client.Object) []reconcile.Request { return replicas(ctx, c) }
}

// replicasInNamespace maps an object to the slices of its namespace that
// consumers replicated to this provider.
func replicasInNamespace(c client.Reader) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		return replicas(ctx, c, client.InNamespace(o.GetNamespace()))
	}
}

// replicas lists the slices consumers replicated to this provider, in
// what opts select.
func replicas(ctx context.Context, c client.Reader, opts ...client.ListOption) []reconcile.Request {
	var list authv1beta1.ResourceSliceList
	if err := c.List(ctx, &list, append(opts, client.MatchingLabels{consts.ReplicationLabel: "true"})...); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}
