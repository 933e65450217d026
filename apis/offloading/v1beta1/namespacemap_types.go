package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MappingPhase is the state of one twin namespace.
// +kubebuilder:validation:Enum=Accepted;CreationLoopBackOff;Terminating
type MappingPhase string

const (
	MappingAccepted            MappingPhase = "Accepted"
	MappingCreationLoopBackOff MappingPhase = "CreationLoopBackOff"
	MappingTerminating         MappingPhase = "Terminating"
)

// RemoteNamespaceStatus is the state of one twin namespace.
type RemoteNamespaceStatus struct {
	RemoteNamespace string `json:"remoteNamespace,omitempty"`
	// +optional
	Phase MappingPhase `json:"phase,omitempty"`
	// Reason says, in one CamelCase word, why the provider does not create
	// the twin (phase CreationLoopBackOff): RemoteNamespaceAlreadyExists,
	// RemoteNameNotAllowed, TooManyRemoteNamespaces or InvalidRemoteName.
	// Providers that predate it leave it empty.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9]*$`
	Reason string `json:"reason,omitempty"`
	// Message tells the consumer's users what to do about Reason.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message,omitempty"`
}

// NamespaceMapSpec lists the twin namespaces wanted in one remote cluster.
type NamespaceMapSpec struct {
	// DesiredMapping maps local namespace names to remote ones. The bound
	// keeps the provider's answer, one status entry per key, within an
	// object's size.
	// +optional
	// +kubebuilder:validation:MaxProperties=1000
	DesiredMapping map[string]string `json:"desiredMapping,omitempty"`
}

// NamespaceMapStatus lists the twin namespaces that exist.
type NamespaceMapStatus struct {
	// CurrentMapping is keyed by local namespace name.
	// +optional
	CurrentMapping map[string]RemoteNamespaceStatus `json:"currentMapping,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// NamespaceMap records the namespaces offloaded to one remote cluster.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=nm;nsmap,categories=liqo
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.metadata.labels.liqo\.io/remote-cluster-id`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type NamespaceMap struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec NamespaceMapSpec `json:"spec,omitzero"`
	// +optional
	Status NamespaceMapStatus `json:"status,omitzero"`
}

// NamespaceMapList is a list of NamespaceMap.
// +kubebuilder:object:root=true
type NamespaceMapList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NamespaceMap `json:"items"`
}

func init() {
	SchemeBuilder.Register(&NamespaceMap{}, &NamespaceMapList{})
}
