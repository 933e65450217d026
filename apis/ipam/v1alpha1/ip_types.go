package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
)

// ServiceTemplateMetadata is the metadata given to the Service of an IP.
type ServiceTemplateMetadata struct {
	// Labels of the Service.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Annotations of the Service.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ServiceTemplate is the Service (with its EndpointSlice pointing at the IP)
// created for an IP, so that in-cluster clients reach the address by name.
type ServiceTemplate struct {
	// Metadata holds the labels and annotations of the Service.
	// +optional
	Metadata ServiceTemplateMetadata `json:"metadata,omitzero"`
	// Spec is the spec of the Service; it should have no selector, since the
	// IPAM writes its EndpointSlice.
	// +optional
	Spec corev1.ServiceSpec `json:"spec,omitzero"`
}

// IPSpec is the local address to make reachable from peers.
type IPSpec struct {
	// IP is the local address (of a node, a load balancer or any host the
	// cluster reaches) to give a remapped twin.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="ip is immutable"
	IP netv1beta1.IP `json:"ip"`
	// NetworkRef names the Network the remapped address is taken from;
	// empty takes it from the cluster's external CIDR.
	// +optional
	NetworkRef *corev1.ObjectReference `json:"networkRef,omitempty"`
	// ServiceTemplate, when set, has a Service created for the address;
	// empty creates none.
	// +optional
	ServiceTemplate *ServiceTemplate `json:"serviceTemplate,omitempty"`
	// Masquerade, when true, has the gateways forward peers' traffic to the
	// address behind their own pod address, for hosts that would not route
	// the answers back through the cluster (such as the API server).
	// +optional
	Masquerade *bool `json:"masquerade,omitempty"`
}

// IPStatus is the remapped address the IPAM allocated. Once set, neither
// field changes.
type IPStatus struct {
	// IP is the remapped address: peers reach spec.ip at this address
	// translated into their own view of this cluster's external CIDR.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="status.ip is immutable once allocated"
	// +optional
	IP netv1beta1.IP `json:"ip,omitempty"`
	// CIDR is the network the remapped address was taken from.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="status.cidr is immutable once allocated"
	// +optional
	CIDR netv1beta1.CIDR `json:"cidr,omitempty"`
	// Conditions report the allocation; see Allocated.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// IP gives a local address that is not a pod's a twin in the external CIDR,
// so that peers can reach it through the gateways.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:categories=liqo
// +kubebuilder:printcolumn:name="IP",type=string,JSONPath=`.spec.ip`
// +kubebuilder:printcolumn:name="Remapped IP",type=string,JSONPath=`.status.ip`
// +kubebuilder:printcolumn:name="Allocated",type=string,JSONPath=`.status.conditions[?(@.type=="Allocated")].status`
// +kubebuilder:printcolumn:name="Remapped CIDR",type=string,JSONPath=`.status.cidr`,priority=1
// +kubebuilder:printcolumn:name="Masquerade",type=boolean,JSONPath=`.spec.masquerade`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type IP struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec IPSpec `json:"spec"`
	// +optional
	Status IPStatus `json:"status,omitzero"`
}

// IPList is a list of IP.
// +kubebuilder:object:root=true
type IPList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []IP `json:"items"`
}

func init() {
	SchemeBuilder.Register(&IP{}, &IPList{})
}
