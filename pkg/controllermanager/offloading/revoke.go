package offloading

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// ReasonTenantGone is the reason of the Event on a consumer's map removed
// because the consumer has no Tenant here any more.
const ReasonTenantGone = "TenantGone"

// peered reports whether consumer still has a Tenant on this provider: the
// only source of its rights here. Unpeering deletes it; without it the
// consumer's maps ask for nothing, whoever deleted it and whether or not
// the tenant namespace stays (it does while this cluster consumes that
// consumer's resources the other way). A Tenant missing from the cache is
// looked for past it before the answer is no: the revocation that follows
// deletes the consumer's maps and twins, and a cache behind a Tenant just
// created (a map replicated right after peering) must not cause that.
func (r *TwinReconciler) peered(ctx context.Context, consumer string) (bool, error) {
	found, err := hasTenant(ctx, r.Client, consumer)
	if err != nil || found {
		return found, err
	}
	reader := r.Reader
	if reader == nil {
		return false, nil
	}
	return hasTenant(ctx, reader, consumer)
}

// hasTenant reports whether reader holds a live Tenant of consumer.
func hasTenant(ctx context.Context, reader client.Reader, consumer string) (bool, error) {
	var list authv1beta1.TenantList
	if err := reader.List(ctx, &list, client.InNamespace(consts.TenantNamespace(consumer))); err != nil {
		return false, err
	}
	for i := range list.Items {
		t := &list.Items[i]
		if string(t.Spec.ClusterID) == consumer && t.DeletionTimestamp.IsZero() {
			return true, nil
		}
	}
	return false, nil
}

// revoke takes back what the consumer's maps obtained once its Tenant is
// gone: its replicated maps are deleted, its twins with them (and with
// the twins, its RoleBindings there, its ShadowPods and everything it
// reflected).
func (r *TwinReconciler) revoke(ctx context.Context, consumer string) error {
	var maps offv1beta1.NamespaceMapList
	if err := r.Client.List(ctx, &maps, client.InNamespace(consts.TenantNamespace(consumer)),
		client.MatchingLabels{consts.ReplicationLabel: "true"}); err != nil {
		return err
	}
	for i := range maps.Items {
		m := &maps.Items[i]
		if !m.DeletionTimestamp.IsZero() {
			continue
		}
		if err := r.Client.Delete(ctx, m); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting NamespaceMap %s/%s of unpeered consumer %s: %w", m.Namespace, m.Name, consumer, err)
		}
		r.Recorder.Eventf(m, corev1.EventTypeNormal, ReasonTenantGone,
			"consumer %s has no Tenant here any more: its map and twin namespaces are removed", consumer)
	}
	ctrl.LoggerFrom(ctx).Info("revoking the twins of an unpeered consumer", "consumer", consumer)
	return r.deleteTwins(ctx, consumer, nil)
}

// mapsOfTenant maps a Tenant to its consumer's replicated maps: its
// deletion revokes them.
func (r *TwinReconciler) mapsOfTenant(ctx context.Context, o client.Object) []reconcile.Request {
	consumer, ok := consts.ClusterIDOfTenantNamespace(o.GetNamespace())
	if !ok {
		return nil
	}
	return r.mapsOf(ctx, consumer)
}
