package testbed

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubeletClientGroup is the group of the certificate the API server presents
// to kubelets, named and bound as kubeadm does.
const kubeletClientGroup = "kubeadm:cluster-admins"

// bindKubeletClient makes the API server's kubelet client a cluster admin,
// like kubeadm's binding of the same name. kwok's kubelet API lets anyone in,
// but a kubelet API that authorizes its callers with SubjectAccessReviews (a
// real kubelet's webhook mode, the virtual kubelet's) would refuse the API
// server's logs, exec and port-forward requests without it.
func (c *Cluster) bindKubeletClient(ctx context.Context) error {
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: kubeletClientGroup},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: kubeletClientGroup}},
	}
	_, err := c.Client().RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("binding the API server's kubelet client: %w", err)
	}
	return nil
}
