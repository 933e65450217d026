package offloading

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/podsecurity"
)

// twinRoleBinding binds the consumer in each of its twin namespaces.
const twinRoleBinding = "liqo-consumer-offloading"

// TwinReconciler creates, on the provider, the twin namespaces a consumer's
// NamespaceMap asks for. The provider creates them itself, so the consumer
// needs no right to create namespaces, and it only ever deletes namespaces
// it created for that consumer.
type TwinReconciler struct {
	Client client.Client
	// ClusterRole is granted to the consumer in its twin namespaces.
	ClusterRole string
	// PodSecurity is the Pod Security Standards level the twins enforce
	// on every Pod (baseline if unset): the API server's own check, behind
	// the ShadowPod webhook's.
	PodSecurity podsecurity.Level
	Recorder    record.EventRecorder
}

// Reconcile brings the twin namespaces of one consumer in line with its map.
func (r *TwinReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	consumer, ok := consts.ClusterIDOfTenantNamespace(req.Namespace)
	if !ok {
		return ctrl.Result{}, nil
	}
	// A consumer may keep several maps here: the twins to keep are those any
	// of them still wants.
	keep, err := r.wanted(ctx, req.Namespace)
	if err != nil {
		return ctrl.Result{}, err
	}
	var m offv1beta1.NamespaceMap
	err = r.Client.Get(ctx, req.NamespacedName, &m)
	if apierrors.IsNotFound(err) || err == nil && !m.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.deleteTwins(ctx, consumer, keep)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	before := m.Status.DeepCopy()
	current := map[string]offv1beta1.RemoteNamespaceStatus{}
	for local, remote := range m.Spec.DesiredMapping {
		phase, err := r.ensureTwin(ctx, consumer, local, remote)
		if err != nil {
			return ctrl.Result{}, err
		}
		if phase == offv1beta1.MappingCreationLoopBackOff {
			r.Recorder.Eventf(&m, corev1.EventTypeWarning, ReasonAlreadyExists,
				"namespace %s already exists on this cluster and was not created for %s: not offloading %s there", remote, consumer, local)
		}
		current[local] = offv1beta1.RemoteNamespaceStatus{RemoteNamespace: remote, Phase: phase}
	}
	if err := r.deleteTwins(ctx, consumer, keep); err != nil {
		return ctrl.Result{}, err
	}
	m.Status.CurrentMapping = current
	if equality.Semantic.DeepEqual(before, &m.Status) {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, r.Client.Status().Update(ctx, &m)
}

// ensureTwin creates the twin namespace and the consumer's RoleBinding in
// it; a namespace of the same name that is not this consumer's is left
// alone and reported.
func (r *TwinReconciler) ensureTwin(ctx context.Context, consumer, local, remote string) (offv1beta1.MappingPhase, error) {
	var ns corev1.Namespace
	err := r.Client.Get(ctx, types.NamespacedName{Name: remote}, &ns)
	switch {
	case apierrors.IsNotFound(err):
		labels := twinLabels(consumer)
		maps.Copy(labels, podsecurity.NamespaceLabels(r.PodSecurity))
		ns = corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: remote, Labels: labels,
			Annotations: map[string]string{TwinOfAnnotation: consumer + "/" + local}}}
		if err := r.Client.Create(ctx, &ns); err != nil {
			return "", fmt.Errorf("creating twin namespace %s: %w", remote, err)
		}
	case err != nil:
		return "", err
	case !isTwinOf(&ns, consumer):
		return offv1beta1.MappingCreationLoopBackOff, nil
	case !ns.DeletionTimestamp.IsZero():
		return offv1beta1.MappingTerminating, nil
	default:
		if err := r.ensurePodSecurity(ctx, &ns); err != nil {
			return "", err
		}
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: twinRoleBinding, Namespace: remote}}
	_, err = controllerutil.CreateOrUpdate(ctx, r.Client, rb, func() error {
		rb.Labels = map[string]string{consts.ManagedByLabel: consts.ManagedByValue}
		rb.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: r.ClusterRole}
		rb.Subjects = []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: consts.ConsumerUser(consumer)}}
		return nil
	})
	return offv1beta1.MappingAccepted, err
}

// ensurePodSecurity puts the Pod Security labels on a twin created before
// them, or under another level.
func (r *TwinReconciler) ensurePodSecurity(ctx context.Context, ns *corev1.Namespace) error {
	want := podsecurity.NamespaceLabels(r.PodSecurity)
	patch := client.MergeFrom(ns.DeepCopy())
	changed := false
	for k, v := range want {
		if ns.Labels[k] != v {
			if ns.Labels == nil {
				ns.Labels = map[string]string{}
			}
			ns.Labels[k], changed = v, true
		}
	}
	if !changed {
		return nil
	}
	if err := r.Client.Patch(ctx, ns, patch); err != nil {
		return fmt.Errorf("labelling twin namespace %s for Pod Security Admission: %w", ns.Name, err)
	}
	return nil
}

// wanted is the set of twin namespaces the live replicated maps of a
// tenant namespace ask for.
func (r *TwinReconciler) wanted(ctx context.Context, tenantNamespace string) (map[string]bool, error) {
	var list offv1beta1.NamespaceMapList
	if err := r.Client.List(ctx, &list, client.InNamespace(tenantNamespace), client.MatchingLabels{consts.ReplicationLabel: "true"}); err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	for i := range list.Items {
		if !list.Items[i].DeletionTimestamp.IsZero() {
			continue
		}
		for _, remote := range list.Items[i].Spec.DesiredMapping {
			keep[remote] = true
		}
	}
	return keep, nil
}

// deleteTwins deletes the consumer's twin namespaces not in keep.
func (r *TwinReconciler) deleteTwins(ctx context.Context, consumer string, keep map[string]bool) error {
	var list corev1.NamespaceList
	if err := r.Client.List(ctx, &list, client.MatchingLabels(twinLabels(consumer))); err != nil {
		return err
	}
	for i := range list.Items {
		ns := &list.Items[i]
		if keep[ns.Name] || !ns.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.Client.Delete(ctx, ns); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}

// TwinOfAnnotation on a twin namespace names the consumer and its namespace.
const TwinOfAnnotation = "liqo.io/twin-of"

func twinLabels(consumer string) map[string]string {
	return map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.TwinNamespaceLabel: "true", consts.RemoteClusterIDLabel: consumer}
}

func isTwinOf(ns *corev1.Namespace, consumer string) bool {
	for k, v := range twinLabels(consumer) {
		if ns.Labels[k] != v {
			return false
		}
	}
	return true
}

// SetupWithManager registers the controller for the maps consumers
// replicated here.
func (r *TwinReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.Recorder = mgr.GetEventRecorderFor("liqo-namespacemap")
	replicated := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()[consts.ReplicationLabel] == "true" })
	twins := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()[consts.TwinNamespaceLabel] == "true" })
	return ctrl.NewControllerManagedBy(mgr).Named("namespacemap-twins").
		For(&offv1beta1.NamespaceMap{}, builder.WithPredicates(replicated)).
		// A twin that finished terminating can be created again for a map
		// that reported it Terminating.
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.mapsOfTwin), builder.WithPredicates(twins)).
		Complete(r)
}

// mapsOfTwin maps a twin namespace to the replicated maps of its consumer.
func (r *TwinReconciler) mapsOfTwin(ctx context.Context, ns client.Object) []reconcile.Request {
	consumer := ns.GetLabels()[consts.RemoteClusterIDLabel]
	if consumer == "" {
		return nil
	}
	var list offv1beta1.NamespaceMapList
	if err := r.Client.List(ctx, &list, client.InNamespace(consts.TenantNamespace(consumer)),
		client.MatchingLabels{consts.ReplicationLabel: "true"}); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}
