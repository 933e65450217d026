package teardown

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/liqo-go/liqo/pkg/consts"
)

// namespaceReaper forces out the content of a consumer's twin namespace
// that has been terminating for longer than the timeout: the finalizers the
// provider did not put, on every kind the consumer may write there (read
// from the rules of the role it has there), and the pods, deleted at once.
// It looks again while the namespace stays, as the namespace controller
// works through what is left.
type namespaceReaper struct {
	client client.Client
	// reader lists past the cache: the kinds looked at are not cached.
	reader   client.Reader
	mapper   meta.RESTMapper
	recorder record.EventRecorder
	timeout  time.Duration
	now      func() time.Time
	// rules are the consumer's rights in its twins.
	rules []rbacv1.PolicyRule
}

// again is how often a twin past the timeout is looked at while it stays.
func (r *namespaceReaper) again() time.Duration { return max(r.timeout/10, 5*time.Second) }

func (r *namespaceReaper) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var ns corev1.Namespace
	if err := r.client.Get(ctx, req.NamespacedName, &ns); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if ns.DeletionTimestamp.IsZero() || ns.Labels[consts.TwinNamespaceLabel] != "true" || ns.Labels[consts.RemoteClusterIDLabel] == "" {
		return ctrl.Result{}, nil
	}
	if wait := overdue(ns.DeletionTimestamp.Time, r.now(), r.timeout); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	kinds, err := writableKinds(r.mapper, r.rules)
	if err != nil {
		return ctrl.Result{}, err
	}
	var stripped []string
	for _, gvk := range kinds {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := r.reader.List(ctx, list, client.InNamespace(ns.Name)); err != nil {
			return ctrl.Result{}, fmt.Errorf("listing the %s of twin namespace %s: %w", gvk.Kind, ns.Name, err)
		}
		for i := range list.Items {
			o := &list.Items[i]
			o.SetGroupVersionKind(gvk)
			gone, err := strip(ctx, r.client, o, gvk.GroupKind())
			if err != nil {
				return ctrl.Result{}, err
			}
			if len(gone) > 0 {
				stripped = append(stripped, fmt.Sprintf("%s %s (%s)", gvk.Kind, o.Name, strings.Join(gone, ", ")))
			}
		}
	}
	pods, err := forceDeletePods(ctx, r.client, r.reader, ns.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(stripped) > 0 {
		r.recorder.Eventf(&ns, corev1.EventTypeWarning, ReasonFinalizersRemoved,
			"removed the finalizers this provider did not put from %s: twin namespace %s of consumer %s had been terminating for more than %s (--teardown-timeout)",
			strings.Join(stripped, "; "), ns.Name, ns.Labels[consts.RemoteClusterIDLabel], r.timeout)
	}
	if pods > 0 {
		r.recorder.Eventf(&ns, corev1.EventTypeWarning, ReasonPodsForceDeleted,
			"deleted %d pods at once: twin namespace %s of consumer %s had been terminating for more than %s (--teardown-timeout)",
			pods, ns.Name, ns.Labels[consts.RemoteClusterIDLabel], r.timeout)
	}
	return ctrl.Result{RequeueAfter: r.again()}, nil
}

// forceDeletePods deletes every pod of namespace at once (grace 0),
// returning how many it deleted.
func forceDeletePods(ctx context.Context, c client.Client, reader client.Reader, namespace string) (int, error) {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
	if err := reader.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return 0, fmt.Errorf("listing the pods of twin namespace %s: %w", namespace, err)
	}
	n := 0
	for i := range list.Items {
		p := &list.Items[i]
		p.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
		if err := c.Delete(ctx, p, client.GracePeriodSeconds(0), client.Preconditions{UID: ptr.To(p.UID)}); client.IgnoreNotFound(err) != nil {
			return n, fmt.Errorf("deleting pod %s/%s: %w", namespace, p.Name, err)
		}
		n++
	}
	return n, nil
}

// writableKinds are the kinds rules allow writing (creating, updating or
// patching: each can set finalizers), subresources aside, as the API
// server serves them now (a kind whose API is not installed is skipped).
func writableKinds(mapper meta.RESTMapper, rules []rbacv1.PolicyRule) ([]schema.GroupVersionKind, error) {
	var out []schema.GroupVersionKind
	for _, rule := range rules {
		if !slices.ContainsFunc(rule.Verbs, func(v string) bool { return v == "create" || v == "update" || v == "patch" || v == "*" }) {
			continue
		}
		for _, group := range rule.APIGroups {
			for _, resource := range rule.Resources {
				if strings.Contains(resource, "/") {
					continue
				}
				gvk, err := mapper.KindFor(schema.GroupVersionResource{Group: group, Resource: resource})
				if meta.IsNoMatchError(err) {
					continue
				}
				if err != nil {
					return nil, fmt.Errorf("finding the kind of %s.%s: %w", resource, group, err)
				}
				if !slices.Contains(out, gvk) {
					out = append(out, gvk)
				}
			}
		}
	}
	return out, nil
}

// setup registers r for twin namespaces being deleted.
func (r *namespaceReaper) setup(mgr ctrl.Manager) error {
	twinGoing := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetLabels()[consts.TwinNamespaceLabel] == "true" && !o.GetDeletionTimestamp().IsZero()
	})
	return ctrl.NewControllerManagedBy(mgr).Named("teardown-twins").
		For(&corev1.Namespace{}, builder.WithPredicates(twinGoing)).
		Complete(r)
}
