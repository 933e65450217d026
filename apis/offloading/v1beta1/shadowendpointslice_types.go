package v1beta1

import (
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EndpointSliceTemplate is the content of the EndpointSlice a consumer asks
// the provider to keep. Its labels and annotations are those of the
// ShadowEndpointSlice itself.
type EndpointSliceTemplate struct {
	// AddressType is the type of every address of the endpoints. An
	// EndpointSlice cannot change it, so a new one replaces the slice.
	// +kubebuilder:validation:Enum=IPv4;IPv6;FQDN
	AddressType discoveryv1.AddressType `json:"addressType"`
	// Endpoints are the consumer's endpoints of the Service, with addresses
	// reachable from the provider: at most an EndpointSlice's 1,000, so that
	// a slice the provider could not keep is refused when written.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=1000
	Endpoints []discoveryv1.Endpoint `json:"endpoints,omitempty"`
	// Ports are the ports every endpoint exposes: at most an
	// EndpointSlice's 100.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	Ports []discoveryv1.EndpointPort `json:"ports,omitempty"`
}

// ShadowEndpointSliceSpec is what a consumer asks of the provider.
type ShadowEndpointSliceSpec struct {
	Template EndpointSliceTemplate `json:"template"`
}

// ShadowEndpointSliceStatus tells whether the provider keeps the
// EndpointSlice as the template says.
type ShadowEndpointSliceStatus struct {
	// Endpoints is the number of endpoints of the EndpointSlice kept for
	// this ShadowEndpointSlice (0 while there is none); it is here, rather
	// than only in the spec, because a printcolumn can show a number but
	// cannot count a list.
	// +optional
	Endpoints int32 `json:"endpoints,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ShadowEndpointSlice is an EndpointSlice reflected by a consumer: the
// provider keeps a real EndpointSlice for it, so that the provider's Service
// also reaches the replicas that run elsewhere. A consumer never writes
// EndpointSlices itself: the provider decides what they look like and where
// they may go (only into the consumer's own twin namespaces).
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=shes,categories=liqo
// +kubebuilder:printcolumn:name="AddressType",type=string,JSONPath=`.spec.template.addressType`
// +kubebuilder:printcolumn:name="Endpoints",type=integer,JSONPath=`.status.endpoints`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ShadowEndpointSlice struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ShadowEndpointSliceSpec `json:"spec"`
	// +optional
	Status ShadowEndpointSliceStatus `json:"status,omitzero"`
}

// ShadowEndpointSliceList is a list of ShadowEndpointSlice.
// +kubebuilder:object:root=true
type ShadowEndpointSliceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ShadowEndpointSlice `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ShadowEndpointSlice{}, &ShadowEndpointSliceList{})
}
