package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
)

// NetworkNotRemappedLabel marks a Network whose CIDR must be allocated as is,
// never remapped (this cluster's own pod and service CIDRs).
const NetworkNotRemappedLabel = "ipam.liqo.io/network-not-remapped"

// NetworkSpec is the network asked of the IPAM. Both fields are immutable:
// delete the Network and create it again to change them.
type NetworkSpec struct {
	// CIDR is the network wanted, such as the pod CIDR of a peer.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="cidr is immutable"
	CIDR netv1beta1.CIDR `json:"cidr"`
	// PreAllocated is how many addresses, from the first one of the
	// allocated network, the IPAM keeps for itself and never hands out to IP
	// objects (the external CIDR keeps its first address for traffic of
	// unknown origin).
	// +kubebuilder:default=0
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="preAllocated is immutable"
	// +optional
	PreAllocated int32 `json:"preAllocated"`
}

// NetworkStatus is what the IPAM allocated.
type NetworkStatus struct {
	// CIDR is the network allocated: spec.cidr itself when it was free, or
	// the free network of the same size it is remapped to.
	// +optional
	CIDR netv1beta1.CIDR `json:"cidr,omitempty"`
	// Conditions report the allocation; see Allocated.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Network is a CIDR allocated by the local IPAM, remapped to a free network
// of the same size when it overlaps one already allocated.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=net,categories=liqo
// +kubebuilder:printcolumn:name="CIDR",type=string,JSONPath=`.spec.cidr`
// +kubebuilder:printcolumn:name="Remapped CIDR",type=string,JSONPath=`.status.cidr`
// +kubebuilder:printcolumn:name="Allocated",type=string,JSONPath=`.status.conditions[?(@.type=="Allocated")].status`
// +kubebuilder:printcolumn:name="PreAllocated",type=integer,JSONPath=`.spec.preAllocated`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Network struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec NetworkSpec `json:"spec"`
	// +optional
	Status NetworkStatus `json:"status,omitzero"`
}

// NetworkList is a list of Network.
// +kubebuilder:object:root=true
type NetworkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Network `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Network{}, &NetworkList{})
}
