package offloading

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
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

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/kit"
	"github.com/liqo-go/liqo/pkg/podsecurity"
)

// twinRoleBinding binds the consumer in each of its twin namespaces.
const twinRoleBinding = "liqo-consumer-offloading"

// TwinReconciler creates, on the provider, the twin namespaces a consumer's
// NamespaceMap asks for. The provider creates them itself, so the consumer
// needs no right to create namespaces, and it only ever deletes namespaces
// it created for that consumer. The map is the consumer's word, so every
// entry is checked against Options: a name of the consumer's own or on the
// allow-list, no namespace that exists for someone else, no more twins
// than the cap; each twin gets a ResourceQuota and a NetworkPolicy before
// the consumer may use it. Refusals go to the map's status, which the
// consumer reads back, and to Events.
type TwinReconciler struct {
	Client client.Client
	// ClusterRole is granted to the consumer in its twin namespaces.
	ClusterRole string
	// PodSecurity is the Pod Security Standards level the twins enforce
	// on every Pod (baseline if unset): the API server's own check, behind
	// the ShadowPod webhook's.
	PodSecurity podsecurity.Level
	// Options bound the consumers' twins.
	Options TwinOptions
	// Reader reads past the cache where a stale count would let a
	// consumer exceed its cap; Client if nil.
	Reader   client.Reader
	Recorder record.EventRecorder
}

// Reconcile brings the twin namespaces of one consumer in line with its map.
func (r *TwinReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	consumer, ok := consts.ClusterIDOfTenantNamespace(req.Namespace)
	if !ok {
		return ctrl.Result{}, nil
	}
	switch peered, err := r.peered(ctx, consumer); {
	case err != nil:
		return ctrl.Result{}, err
	case !peered:
		return ctrl.Result{}, r.revoke(ctx, consumer)
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
	tenants, err := r.tenants(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	orig := m.DeepCopy()
	before := &orig.Status
	current := map[string]offv1beta1.RemoteNamespaceStatus{}
	count := &twinCount{r: r, consumer: consumer}
	// One entry's failure does not hold the others back.
	var errs []error
	for _, local := range sortedKeys(m.Spec.DesiredMapping) {
		remote := m.Spec.DesiredMapping[local]
		st, err := r.entry(ctx, consumer, local, remote, tenants, count)
		if err != nil {
			errs = append(errs, fmt.Errorf("twin %s of %s/%s: %w", remote, consumer, local, err))
			if old, ok := before.CurrentMapping[local]; ok {
				current[local] = old
			}
			continue
		}
		if st == nil {
			continue // pending: no answer yet
		}
		if st.Reason != "" && before.CurrentMapping[local] != *st {
			r.Recorder.Eventf(&m, corev1.EventTypeWarning, st.Reason, "not offloading namespace %s of %s: %s", local, consumer, st.Message)
		}
		current[local] = *st
	}
	if err := r.deleteTwins(ctx, consumer, keep); err != nil {
		errs = append(errs, err)
	}
	m.Status.CurrentMapping = current
	if err := kit.PatchStatus(ctx, r.Client, &m, orig); err != nil {
		errs = append(errs, err)
	}
	return ctrl.Result{}, errors.Join(errs...)
}

// entry decides one entry: refused (with a reason), accepted or
// terminating, or nil while the twin's quota is not yet enforced.
func (r *TwinReconciler) entry(ctx context.Context, consumer, local, remote string, tenants []string, count *twinCount) (*offv1beta1.RemoteNamespaceStatus, error) {
	refused := func(reason, message string) *offv1beta1.RemoteNamespaceStatus {
		return &offv1beta1.RemoteNamespaceStatus{RemoteNamespace: remote, Phase: offv1beta1.MappingCreationLoopBackOff, Reason: reason, Message: message}
	}
	var ns corev1.Namespace
	err := r.Client.Get(ctx, types.NamespacedName{Name: remote}, &ns)
	if err != nil && !apierrors.IsNotFound(err) {
		return nil, err
	}
	exists := err == nil
	switch {
	case exists && isTwinOf(&ns, consumer):
		// The rules bind the creation of twins: a twin made under a wider
		// allow-list or cap, or before another tenant took its suffix,
		// stays until no map wants it. Only a tenant namespace's name never
		// stays (deleteTwins removes it).
		if reason, message := reservedName(remote); reason != "" {
			return refused(reason, message), nil
		}
		if !ns.DeletionTimestamp.IsZero() {
			return &offv1beta1.RemoteNamespaceStatus{RemoteNamespace: remote, Phase: offv1beta1.MappingTerminating}, nil
		}
		if err := r.ensurePodSecurity(ctx, &ns); err != nil {
			return nil, err
		}
	default:
		// The name first: a consumer learns nothing of the provider's
		// namespaces from a name it may not have anyway.
		if reason, message := r.Options.refuseName(consumer, remote, tenants); reason != "" {
			return refused(reason, message), nil
		}
		if exists {
			return refused(ReasonAlreadyExists, alreadyExists(consumer, remote)), nil
		}
		n, err := count.get(ctx)
		if err != nil {
			return nil, err
		}
		if n >= r.Options.MaxPerTenant {
			return refused(ReasonTooMany, r.Options.tooMany(consumer, remote)), nil
		}
		labels := twinLabels(consumer)
		maps.Copy(labels, podsecurity.NamespaceLabels(r.PodSecurity))
		ns = corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: remote, Labels: labels,
			Annotations: map[string]string{TwinOfAnnotation: consumer + "/" + local}}}
		if err := r.Client.Create(ctx, &ns); err != nil {
			return nil, fmt.Errorf("creating twin namespace %s: %w", remote, err)
		}
		count.add(remote)
	}
	ready, err := r.ensureGuards(ctx, consumer, remote)
	if err != nil || !ready {
		return nil, err
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: twinRoleBinding, Namespace: remote}}
	_, err = controllerutil.CreateOrUpdate(ctx, r.Client, rb, func() error {
		rb.Labels = map[string]string{consts.ManagedByLabel: consts.ManagedByValue}
		rb.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: r.ClusterRole}
		rb.Subjects = []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: consts.ConsumerUser(consumer)}}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &offv1beta1.RemoteNamespaceStatus{RemoteNamespace: remote, Phase: offv1beta1.MappingAccepted}, nil
}

// ensureGuards puts the ResourceQuota and the NetworkPolicy in a twin and
// puts them back as they should be. It reports the twin ready for the
// consumer once the quota is enforced, or once the consumer was let in
// before (a quota an administrator recreated does not lock it out).
func (r *TwinReconciler) ensureGuards(ctx context.Context, consumer, twin string) (bool, error) {
	var configs netv1beta1.ConfigurationList
	if err := r.Client.List(ctx, &configs, client.InNamespace(consts.TenantNamespace(consumer))); err != nil {
		return false, fmt.Errorf("reading the networks of %s: %w", consumer, err)
	}
	np := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: TwinNetworkPolicyName, Namespace: twin}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, np, func() error {
		maps.Copy(initLabels(&np.ObjectMeta), guardLabels(consumer))
		np.Spec = twinNetworkPolicySpec(consumer, consumerNetworks(configs.Items))
		return nil
	}); err != nil {
		return false, fmt.Errorf("the NetworkPolicy of twin %s: %w", twin, err)
	}
	if err := r.ensureEgressPolicy(ctx, consumer, twin, configs.Items); err != nil {
		return false, err
	}
	rq := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: TwinQuotaName, Namespace: twin}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, rq, func() error {
		maps.Copy(initLabels(&rq.ObjectMeta), guardLabels(consumer))
		rq.Spec = twinQuotaSpec(r.Options.Quota)
		return nil
	}); err != nil {
		return false, fmt.Errorf("the ResourceQuota of twin %s: %w", twin, err)
	}
	if quotaEnforced(rq) {
		return true, nil
	}
	// The quota's status update wakes us.
	err := r.Client.Get(ctx, types.NamespacedName{Namespace: twin, Name: twinRoleBinding}, &rbacv1.RoleBinding{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

func initLabels(o *metav1.ObjectMeta) map[string]string {
	if o.Labels == nil {
		o.Labels = map[string]string{}
	}
	return o.Labels
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

// twinCount counts a consumer's twins, read past the cache at the first
// twin to create in a run and kept up to date by the run's own creations.
type twinCount struct {
	r        *TwinReconciler
	consumer string
	names    map[string]bool
}

func (c *twinCount) get(ctx context.Context) (int, error) {
	if c.names == nil {
		reader := c.r.Reader
		if reader == nil {
			reader = c.r.Client
		}
		var list corev1.NamespaceList
		if err := reader.List(ctx, &list, client.MatchingLabels(twinLabels(c.consumer))); err != nil {
			return 0, fmt.Errorf("counting the twins of %s: %w", c.consumer, err)
		}
		// Twins being deleted still count until they are gone: their
		// deletion wakes the maps again.
		c.names = map[string]bool{}
		for i := range list.Items {
			c.names[list.Items[i].Name] = true
		}
	}
	return len(c.names), nil
}

func (c *twinCount) add(name string) { c.names[name] = true }

// tenants lists the cluster ids of this cluster's tenant namespaces, whose
// default twin names are theirs.
func (r *TwinReconciler) tenants(ctx context.Context) ([]string, error) {
	var list corev1.NamespaceList
	if err := r.Client.List(ctx, &list, client.MatchingLabels{consts.TenantNamespaceLabel: "true"}); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(list.Items))
	for i := range list.Items {
		if id, ok := consts.ClusterIDOfTenantNamespace(list.Items[i].Name); ok {
			out = append(out, id)
		}
	}
	return out, nil
}

// wanted is the set of twin namespaces the live replicated maps of a
// tenant namespace ask for, but a tenant namespace's name.
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
			if reason, _ := reservedName(remote); reason == "" {
				keep[remote] = true
			}
		}
	}
	return keep, nil
}

// deleteTwins deletes the consumer's twin namespaces not in keep: only
// namespaces this cluster created for it.
func (r *TwinReconciler) deleteTwins(ctx context.Context, consumer string, keep map[string]bool) error {
	var list corev1.NamespaceList
	if err := r.Client.List(ctx, &list, client.MatchingLabels(twinLabels(consumer))); err != nil {
		return err
	}
	for i := range list.Items {
		ns := &list.Items[i]
		if keep[ns.Name] || !ns.DeletionTimestamp.IsZero() || !isTwinOf(ns, consumer) {
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

// isTwinOf tells whether this cluster created ns for consumer: the labels
// and the annotation it writes at creation, together. Labels alone are
// what a namespace copied from a twin's manifest, or labelled by hand to be
// let through the twins' NetworkPolicies, also has: such a namespace is
// neither adopted nor deleted.
func isTwinOf(ns *corev1.Namespace, consumer string) bool {
	for k, v := range twinLabels(consumer) {
		if ns.Labels[k] != v {
			return false
		}
	}
	return strings.HasPrefix(ns.Annotations[TwinOfAnnotation], consumer+"/")
}

// SetupWithManager registers the controller for the maps consumers
// replicated here.
func (r *TwinReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.Recorder = mgr.GetEventRecorderFor("liqo-namespacemap")
	replicated := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()[consts.ReplicationLabel] == "true" })
	twins := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()[consts.TwinNamespaceLabel] == "true" })
	guards := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetLabels()[consts.ManagedByLabel] == consts.ManagedByValue && o.GetLabels()[consts.RemoteClusterIDLabel] != ""
	})
	return ctrl.NewControllerManagedBy(mgr).Named("namespacemap-twins").
		For(&offv1beta1.NamespaceMap{}, builder.WithPredicates(replicated)).
		// A twin that finished terminating can be created again for a map
		// that reported it Terminating, and frees a slot under the cap.
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.mapsOfConsumer), builder.WithPredicates(twins)).
		// A guard deleted or changed is put back; a quota's first usage
		// lets the consumer in.
		Watches(&corev1.ResourceQuota{}, handler.EnqueueRequestsFromMapFunc(r.mapsOfConsumer), builder.WithPredicates(guards)).
		Watches(&networkingv1.NetworkPolicy{}, handler.EnqueueRequestsFromMapFunc(r.mapsOfConsumer), builder.WithPredicates(guards)).
		// The nodes' addresses are kept from the twins' pods.
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.allMaps), builder.WithPredicates(nodeAddressesChanged)).
		// The consumer's networks, remapped, are in its policies.
		Watches(&netv1beta1.Configuration{}, handler.EnqueueRequestsFromMapFunc(r.mapsOfConfiguration)).
		// Unpeering (the Tenant's deletion) revokes the consumer's twins.
		Watches(&authv1beta1.Tenant{}, handler.EnqueueRequestsFromMapFunc(r.mapsOfTenant)).
		Complete(r)
}

// mapsOfConfiguration maps a Configuration to the maps of the consumer
// whose tenant namespace holds it.
func (r *TwinReconciler) mapsOfConfiguration(ctx context.Context, o client.Object) []reconcile.Request {
	consumer, ok := consts.ClusterIDOfTenantNamespace(o.GetNamespace())
	if !ok {
		return nil
	}
	return r.mapsOf(ctx, consumer)
}

// mapsOfConsumer maps a twin namespace, or a guard in one, to the
// replicated maps of the consumer its labels name.
func (r *TwinReconciler) mapsOfConsumer(ctx context.Context, o client.Object) []reconcile.Request {
	consumer := o.GetLabels()[consts.RemoteClusterIDLabel]
	if consumer == "" {
		return nil
	}
	return r.mapsOf(ctx, consumer)
}

// mapsOf lists the replicated maps of consumer.
func (r *TwinReconciler) mapsOf(ctx context.Context, consumer string) []reconcile.Request {
	return r.replicatedMaps(ctx, client.InNamespace(consts.TenantNamespace(consumer)))
}

// allMaps maps a change that touches every twin to every replicated map.
func (r *TwinReconciler) allMaps(ctx context.Context, _ client.Object) []reconcile.Request {
	return r.replicatedMaps(ctx)
}

// replicatedMaps lists the replicated maps opts select.
func (r *TwinReconciler) replicatedMaps(ctx context.Context, opts ...client.ListOption) []reconcile.Request {
	var list offv1beta1.NamespaceMapList
	if err := r.Client.List(ctx, &list, append(opts, client.MatchingLabels{consts.ReplicationLabel: "true"})...); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
	}
	return out
}
