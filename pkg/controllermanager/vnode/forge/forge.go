// Package forge derives a consumer's VirtualNode from one of its
// ResourceSlices, as pure functions: the controller that creates the
// VirtualNode of each accepted slice and liqoctl create virtualnode
// --resource-slice-name share them, so both make the same node. It imports
// no controller, so that liqoctl links only this.
package forge

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// Accepted reports whether the provider accepted both the consumer and the
// resources of s, and granted some.
func Accepted(s *authv1beta1.ResourceSlice) bool {
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

// WantsVirtualNode reports whether the consumer creates the VirtualNode of
// s itself once it is accepted: unless its annotation
// consts.CreateVirtualNodeAnnotation says "false".
func WantsVirtualNode(s *authv1beta1.ResourceSlice) bool {
	return s.Annotations[consts.CreateVirtualNodeAnnotation] != "false"
}

// VirtualNodeFromSlice sets on vn what a VirtualNode standing for provider
// with the resources s was granted has: its labels, the provider's cluster
// ID, a Node, the credentials of the consumer's Identity for provider, the
// granted resources as capacity, the node labels and storage classes the
// provider reported. The other fields of vn (an offloading patch, taints)
// are left as they are.
func VirtualNodeFromSlice(vn *offv1beta1.VirtualNode, s *authv1beta1.ResourceSlice, provider string) {
	vn.Labels = map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.RemoteClusterIDLabel: provider}
	vn.Spec.ClusterID = corev1beta1.ClusterID(provider)
	vn.Spec.CreateNode = ptr.To(true)
	vn.Spec.KubeconfigSecretRef = &corev1.LocalObjectReference{Name: consts.KubeconfigSecretName(consts.IdentityName(provider))}
	vn.Spec.ResourceQuota.Hard = s.Status.Resources
	vn.Spec.Labels = s.Status.NodeLabels
	vn.Spec.StorageClasses = s.Status.StorageClasses
}
