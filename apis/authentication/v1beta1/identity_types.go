package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
)

// IdentityType is what an identity is used for.
// +kubebuilder:validation:Enum=ControlPlane;ResourceSlice
type IdentityType string

const (
	// ControlPlaneIdentity operates the peering itself.
	ControlPlaneIdentity IdentityType = "ControlPlane"
	// ResourceSliceIdentity runs the workloads of one ResourceSlice.
	ResourceSliceIdentity IdentityType = "ResourceSlice"
)

// IdentitySpec holds the credentials a provider issued to this cluster.
type IdentitySpec struct {
	// ClusterID of the provider.
	// +optional
	ClusterID corev1beta1.ClusterID `json:"clusterID,omitempty"`
	// +optional
	Type IdentityType `json:"type,omitempty"`
	// +optional
	AuthParams AuthParams `json:"authParams,omitzero"`
	// Namespace is the tenant namespace on the provider.
	// +optional
	Namespace *string `json:"namespace,omitempty"`
}

// IdentityStatus points at the kubeconfig built from the identity.
type IdentityStatus struct {
	// +optional
	KubeconfigSecretRef *corev1.LocalObjectReference `json:"kubeconfigSecretRef,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Identity is a set of credentials for a provider's API server.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=id,categories=liqo
// +kubebuilder:printcolumn:name="ClusterID",type=string,JSONPath=`.spec.clusterID`
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="KubeconfigSecret",type=string,JSONPath=`.status.kubeconfigSecretRef.name`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Identity struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec IdentitySpec `json:"spec,omitzero"`
	// +optional
	Status IdentityStatus `json:"status,omitzero"`
}

// IdentityList is a list of Identity.
// +kubebuilder:object:root=true
type IdentityList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Identity `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Identity{}, &IdentityList{})
}
