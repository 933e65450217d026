// Package vnode turns accepted ResourceSlices into VirtualNodes and runs, for
// each VirtualNode, the Node that stands for the provider in this cluster.
package vnode

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// CreatorReconciler creates, on the consumer, the VirtualNode of each
// ResourceSlice its provider accepted, sized as granted; the VirtualNode is
// owned by the slice, so deleting the slice removes it.
type CreatorReconciler struct {
	Client    client.Client
	ClusterID string
}

// Reconcile creates or resizes the VirtualNode, or deletes it when the slice
// is no longer accepted.
func (r *CreatorReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var s authv1beta1.ResourceSlice
	if err := r.Client.Get(ctx, req.NamespacedName, &s); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	provider, ok := consts.ClusterIDOfTenantNamespace(s.Namespace)
	if !ok || !s.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	vn := &offv1beta1.VirtualNode{ObjectMeta: metav1.ObjectMeta{Name: s.Name, Namespace: s.Namespace}}
	if !s.Accepted() || !s.WantsVirtualNode() {
		return ctrl.Result{}, r.deleteOwn(ctx, &s, vn)
	}
	_, err := controllerutil.CreateOrUpdate(ctx, r.Client, vn, func() error {
		vn.SetFromSlice(&s, provider)
		return controllerutil.SetControllerReference(&s, vn, r.Client.Scheme())
	})
	return ctrl.Result{}, err
}

// deleteOwn deletes the slice's VirtualNode if the slice made it: one of
// that name made by liqoctl create virtualnode stays.
func (r *CreatorReconciler) deleteOwn(ctx context.Context, s *authv1beta1.ResourceSlice, vn *offv1beta1.VirtualNode) error {
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(vn), vn); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !metav1.IsControlledBy(vn, s) {
		return nil
	}
	return client.IgnoreNotFound(r.Client.Delete(ctx, vn))
}

// SetupWithManager registers the controller for this cluster's own slices.
func (r *CreatorReconciler) SetupWithManager(mgr ctrl.Manager) error {
	mine := predicate.NewPredicateFuncs(func(o client.Object) bool {
		s, ok := o.(*authv1beta1.ResourceSlice)
		return ok && s.Labels[consts.ReplicationLabel] == "" && s.Spec.ConsumerClusterID != nil && string(*s.Spec.ConsumerClusterID) == r.ClusterID
	})
	return ctrl.NewControllerManagedBy(mgr).Named("virtualnode-creator").
		For(&authv1beta1.ResourceSlice{}, builder.WithPredicates(mine)).
		Owns(&offv1beta1.VirtualNode{}).
		Complete(r)
}
