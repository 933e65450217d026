package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Endpoint is how a GatewayServer is exposed to the other cluster: the
// Service put in front of the gateway pod.
// +kubebuilder:validation:XValidation:rule="!has(self.nodePort) || (has(self.serviceType) && self.serviceType in ['NodePort', 'LoadBalancer'])",message="nodePort needs serviceType NodePort or LoadBalancer"
// +kubebuilder:validation:XValidation:rule="!has(self.loadBalancerIP) || (has(self.serviceType) && self.serviceType == 'LoadBalancer')",message="loadBalancerIP needs serviceType LoadBalancer"
type Endpoint struct {
	// Port is the UDP port the gateway listens on, and the port of its
	// Service.
	// +kubebuilder:default=51840
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int32 `json:"port,omitempty"`
	// ServiceType is the type of the gateway's Service: LoadBalancer when the
	// clusters reach each other only through a load balancer, NodePort when
	// they reach each other's nodes, ClusterIP when they share a network.
	// +kubebuilder:default=ClusterIP
	// +kubebuilder:validation:Enum=ClusterIP;NodePort;LoadBalancer
	// +optional
	ServiceType corev1.ServiceType `json:"serviceType,omitempty"`
	// NodePort pins the node port of the Service (NodePort or LoadBalancer
	// types); empty lets Kubernetes choose one.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	NodePort *int32 `json:"nodePort,omitempty"`
	// LoadBalancerIP asks the load balancer for this address (LoadBalancer
	// type only), for providers that support static addresses.
	// +kubebuilder:validation:MaxLength=45
	// +kubebuilder:validation:XValidation:rule="isIP(self)",messageExpression="'\"' + self + '\" is not an IP address'"
	// +optional
	LoadBalancerIP *string `json:"loadBalancerIP,omitempty"`
}

// EndpointStatus is where a gateway server can be reached: the addresses,
// port and protocol a gateway client dials.
type EndpointStatus struct {
	// Addresses are the IP addresses or DNS names of the server, any of which
	// a client may dial.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	Addresses []Address `json:"addresses,omitempty"`
	// Port is the port of the server at those addresses.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +optional
	Port int32 `json:"port,omitempty"`
	// Protocol is the transport of the tunnel: UDP for WireGuard.
	// +kubebuilder:validation:Enum=TCP;UDP
	// +optional
	Protocol *corev1.Protocol `json:"protocol,omitempty"`
}

// InternalGatewayEndpoint is where the gateway pod sits inside its own
// cluster: the nodes tunnel their traffic for the peer to it.
type InternalGatewayEndpoint struct {
	// IP is the address of the gateway pod.
	// +optional
	IP *IP `json:"ip,omitempty"`
	// Node is the name of the node the gateway pod runs on.
	// +optional
	Node *string `json:"node,omitempty"`
}

// GatewayServerSpec is the gateway a cluster asks for to accept a peer's
// tunnel.
type GatewayServerSpec struct {
	// ServerTemplateRef points at the template the gateway is rendered from
	// (for WireGuard, a WgGatewayServerTemplate); empty uses the installation's
	// default.
	// +optional
	ServerTemplateRef corev1.ObjectReference `json:"serverTemplateRef,omitzero"`
	// MTU is the MTU of the tunnel interface; it must be the same at both
	// ends of the tunnel.
	// +kubebuilder:default=1340
	// +kubebuilder:validation:Minimum=576
	// +kubebuilder:validation:Maximum=9000
	// +optional
	MTU int32 `json:"mtu,omitempty"`
	// Endpoint is how the server is exposed to the peer.
	// +kubebuilder:default={}
	// +optional
	Endpoint Endpoint `json:"endpoint,omitzero"`
	// SecretRef names the Secret holding the gateway's key pair; empty lets
	// the controller generate one.
	// +optional
	SecretRef corev1.LocalObjectReference `json:"secretRef,omitzero"`
}

// GatewayServerStatus tells where the gateway server runs and how the peer
// reaches it.
type GatewayServerStatus struct {
	// ServerRef points at the object that implements the server (for
	// WireGuard, a WgGatewayServer).
	// +optional
	ServerRef *corev1.ObjectReference `json:"serverRef,omitempty"`
	// Endpoint is where the peer's GatewayClient must point: it is the
	// endpoint to copy into the client's spec.
	// +optional
	Endpoint *EndpointStatus `json:"endpoint,omitempty"`
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

// GatewayServer is the end of a peering's tunnel that waits for the peer to
// connect: a gateway pod behind a Service. It lives in the peer's tenant
// namespace, named after the peer's cluster ID; its status.endpoint is what
// the peer's GatewayClient dials.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=gws;gwserver,categories=liqo
// +kubebuilder:printcolumn:name="Service Type",type=string,JSONPath=`.spec.endpoint.serviceType`
// +kubebuilder:printcolumn:name="Address",type=string,JSONPath=`.status.endpoint.addresses`
// +kubebuilder:printcolumn:name="Port",type=integer,JSONPath=`.status.endpoint.port`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Protocol",type=string,JSONPath=`.status.endpoint.protocol`,priority=1
// +kubebuilder:printcolumn:name="MTU",type=integer,JSONPath=`.spec.mtu`,priority=1
// +kubebuilder:printcolumn:name="Template",type=string,JSONPath=`.spec.serverTemplateRef.name`,priority=1
// +kubebuilder:printcolumn:name="Node",type=string,JSONPath=`.status.internalEndpoint.node`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type GatewayServer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec GatewayServerSpec `json:"spec,omitzero"`
	// +optional
	Status GatewayServerStatus `json:"status,omitzero"`
}

// GatewayServerList is a list of GatewayServer.
// +kubebuilder:object:root=true
type GatewayServerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []GatewayServer `json:"items"`
}

func init() {
	SchemeBuilder.Register(&GatewayServer{}, &GatewayServerList{})
}
