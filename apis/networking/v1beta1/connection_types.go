package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConnectionType is which end of the tunnel a gateway is.
// +kubebuilder:validation:Enum=Server;Client
type ConnectionType string

const (
	// ServerConnection is the end behind a GatewayServer.
	ServerConnection ConnectionType = "Server"
	// ClientConnection is the end behind a GatewayClient.
	ClientConnection ConnectionType = "Client"
)

// ConnectionStatusValue is the state of a tunnel.
// +kubebuilder:validation:Enum=Connecting;Connected;Error
type ConnectionStatusValue string

const (
	// Connecting is a tunnel not up yet: the gateway waits for the peer's
	// first answer.
	Connecting ConnectionStatusValue = "Connecting"
	// Connected is a tunnel the peer answers through.
	Connected ConnectionStatusValue = "Connected"
	// ConnectionError is a tunnel the peer stopped answering through.
	ConnectionError ConnectionStatusValue = "Error"
)

// ConnectedCondition is the condition type a Connection reports as True
// while status.value is Connected, so that users can
// `kubectl wait --for=condition=Connected`.
const ConnectedCondition = "Connected"

// ConnectionSpec says which gateway the Connection reports on.
type ConnectionSpec struct {
	// Type is the end of the tunnel the gateway is.
	Type ConnectionType `json:"type"`
	// GatewayRef points at the GatewayServer or GatewayClient whose tunnel
	// this is.
	GatewayRef corev1.ObjectReference `json:"gatewayRef"`
}

// ConnectionLatency is the last measured round-trip time through the tunnel.
type ConnectionLatency struct {
	// Value is the round-trip time, as a duration such as "1.234ms".
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Value string `json:"value,omitempty"`
	// Timestamp is when it was measured.
	// +optional
	Timestamp metav1.Time `json:"timestamp,omitzero"`
}

// ConnectionStatus is the state of the tunnel as its gateway sees it.
type ConnectionStatus struct {
	// Value is the state of the tunnel.
	// +optional
	Value ConnectionStatusValue `json:"value,omitempty"`
	// Latency is the last round-trip time measured through the tunnel.
	// +optional
	Latency ConnectionLatency `json:"latency,omitzero"`
	// Conditions report the state of the tunnel; see Connected.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Connection reports whether a gateway's tunnel to its peer is up. The
// gateway creates it next to its GatewayServer or GatewayClient and keeps it
// current; users read it, never write it.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=conn,categories=liqo
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.value`
// +kubebuilder:printcolumn:name="Latency",type=string,JSONPath=`.status.latency.value`
// +kubebuilder:printcolumn:name="Gateway",type=string,JSONPath=`.spec.gatewayRef.name`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Connection struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ConnectionSpec `json:"spec"`
	// +optional
	Status ConnectionStatus `json:"status,omitzero"`
}

// ConnectionList is a list of Connection.
// +kubebuilder:object:root=true
type ConnectionList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Connection `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Connection{}, &ConnectionList{})
}
