// Package vnode turns accepted ResourceSlices into VirtualNodes and runs, for
// each VirtualNode, the Node that stands for the provider in this cluster.
package vnode

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
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
	if !accepted(&s) {
		return ctrl.Result{}, client.IgnoreNotFound(r.Client.Delete(ctx, vn))
	}
	_, err := controllerutil.CreateOrUpdate(ctx, r.Client, vn, func() error {
		vn.Labels = map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.RemoteClusterIDLabel: provider}
		vn.Spec.ClusterID = corev1beta1.ClusterID(provider)
		vn.Spec.CreateNode = ptr(true)
		vn.Spec.KubeconfigSecretRef = &corev1.LocalObjectReference{Name: consts.KubeconfigSecretName(consts.IdentityName(provider))}
		vn.Spec.ResourceQuota.Hard = s.Status.Resources
		vn.Spec.Labels = s.Status.NodeLabels
		vn.Spec.StorageClasses = s.Status.StorageClasses
		return controllerutil.SetControllerReference(&s, vn, r.Client.Scheme())
	})
	return ctrl.Result{}, err
}

// accepted tells whether the provider accepted both the consumer and its
// resources.
func accepted(s *authv1beta1.ResourceSlice) bool {
	var authOK, resOK bool
	for _, c := range s.Status.Conditions {
		switch c.Type {
		case authv1beta1.ResourceSliceAuthentication:
			authOK = c.Status == authv1beta1.ResourceSliceAccepted
		case authv1beta1.ResourceSliceResources:
			resOK = c.Status == authv1beta1.ResourceSliceAccepted
		}
	}
	return authOK && resOK && len(s.Status.Resources) > 0
}

func ptr[T any](v T) *T { return &v }

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
