package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GatewayClientSpec is the gateway a cluster asks for to dial a peer's
// GatewayServer.
type GatewayClientSpec struct {
	// ClientTemplateRef points at the template the gateway is rendered from
	// (for WireGuard, a WgGatewayClientTemplate); empty uses the installation's
	// default.
	// +optional
	ClientTemplateRef corev1.ObjectReference `json:"clientTemplateRef,omitzero"`
	// MTU is the MTU of the tunnel interface; it must be the same at both
	// ends of the tunnel.
	// +kubebuilder:default=1340
	// +kubebuilder:validation:Minimum=576
	// +kubebuilder:validation:Maximum=9000
	// +optional
	MTU int32 `json:"mtu,omitempty"`
	// Endpoint is the peer's GatewayServer as this cluster reaches it: as a
	// rule a copy of that server's status.endpoint, or an address and port
	// in front of it when a NAT sits in between.
	// +kubebuilder:validation:XValidation:rule="has(self.addresses) && size(self.addresses) > 0",message="endpoint.addresses needs the address of the peer's gateway server"
	// +kubebuilder:validation:XValidation:rule="has(self.port)",message="endpoint.port needs the port of the peer's gateway server"
	Endpoint EndpointStatus `json:"endpoint"`
	// SecretRef names the Secret holding the gateway's key pair; empty lets
	// the controller generate one.
	// +optional
	SecretRef corev1.LocalObjectReference `json:"secretRef,omitzero"`
}

// GatewayClientStatus tells where the gateway client runs.
type GatewayClientStatus struct {
	// ClientRef points at the object that implements the client (for
	// WireGuard, a WgGatewayClient).
	// +optional
	ClientRef *corev1.ObjectReference `json:"clientRef,omitempty"`
	// SecretRef points at the Secret with the gateway's key pair; its
	// public key is what the peer's PublicKey must hold.
	// +optional
	SecretRef *corev1.ObjectReference `json:"secretRef,omitempty"`
	// InternalEndpoint is where the gateway pod runs in this cluster.
	// +optional
	InternalEndpoint *InternalGatewayEndpoint `json:"internalEndpoint,omitempty"`
	// Conditions report the state of the gateway; see Ready.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// GatewayClient is the end of a peering's tunnel that dials the peer's
// GatewayServer. It lives in the peer's tenant namespace, named after the
// peer's cluster ID.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=gwc;gwclient,categories=liqo
// +kubebuilder:printcolumn:name="Address",type=string,JSONPath=`.spec.endpoint.addresses`
// +kubebuilder:printcolumn:name="Port",type=integer,JSONPath=`.spec.endpoint.port`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Protocol",type=string,JSONPath=`.spec.endpoint.protocol`,priority=1
// +kubebuilder:printcolumn:name="MTU",type=integer,JSONPath=`.spec.mtu`,priority=1
// +kubebuilder:printcolumn:name="Template",type=string,JSONPath=`.spec.clientTemplateRef.name`,priority=1
// +kubebuilder:printcolumn:name="Node",type=string,JSONPath=`.status.internalEndpoint.node`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type GatewayClient struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec GatewayClientSpec `json:"spec"`
	// +optional
	Status GatewayClientStatus `json:"status,omitzero"`
}

// GatewayClientList is a list of GatewayClient.
// +kubebuilder:object:root=true
type GatewayClientList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []GatewayClient `json:"items"`
}

func init() {
	SchemeBuilder.Register(&GatewayClient{}, &GatewayClientList{})
}
