package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// SetFromSlice sets on vn what a VirtualNode standing for provider with
// the resources s was granted has: its labels, the provider's cluster ID,
// a Node, the credentials of the consumer's Identity for provider, the
// granted resources as capacity, the node labels and storage classes the
// provider reported. The other fields of vn (an offloading patch, taints)
// are left as they are. The controller that creates the VirtualNode of
// each accepted slice and liqoctl create virtualnode --resource-slice-name
// share it, so both make the same node.
func (vn *VirtualNode) SetFromSlice(s *authv1beta1.ResourceSlice, provider string) {
	vn.Labels = map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.RemoteClusterIDLabel: provider}
	vn.Spec.ClusterID = corev1beta1.ClusterID(provider)
	vn.Spec.CreateNode = ptr.To(true)
	vn.Spec.KubeconfigSecretRef = &corev1.LocalObjectReference{Name: consts.KubeconfigSecretName(consts.IdentityName(provider))}
	vn.Spec.ResourceQuota.Hard = s.Status.Resources
	vn.Spec.Labels = s.Status.NodeLabels
	vn.Spec.StorageClasses = s.Status.StorageClasses
}
