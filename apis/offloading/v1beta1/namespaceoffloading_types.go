package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NamespaceOffloadingName is the only name a NamespaceOffloading may have:
// there is at most one per namespace.
const NamespaceOffloadingName = "offloading"

// NamespaceMappingStrategy says how the remote (twin) namespace is named.
// +kubebuilder:validation:Enum=DefaultName;EnforceSameName;SelectedName
type NamespaceMappingStrategy string

const (
	// DefaultNameMappingStrategy names the twin <namespace>-<local cluster id>.
	DefaultNameMappingStrategy NamespaceMappingStrategy = "DefaultName"
	// EnforceSameNameMappingStrategy keeps the local name remotely.
	EnforceSameNameMappingStrategy NamespaceMappingStrategy = "EnforceSameName"
	// SelectedNameMappingStrategy uses spec.remoteNamespaceName.
	SelectedNameMappingStrategy NamespaceMappingStrategy = "SelectedName"
)

// PodOffloadingStrategy says where the pods of the namespace may run.
// +kubebuilder:validation:Enum=LocalAndRemote;Local;Remote
type PodOffloadingStrategy string

const (
	// LocalAndRemotePodOffloadingStrategy lets pods run on local and virtual nodes.
	LocalAndRemotePodOffloadingStrategy PodOffloadingStrategy = "LocalAndRemote"
	// LocalPodOffloadingStrategy keeps pods local (twin namespaces still exist).
	LocalPodOffloadingStrategy PodOffloadingStrategy = "Local"
	// RemotePodOffloadingStrategy runs pods on virtual nodes only.
	RemotePodOffloadingStrategy PodOffloadingStrategy = "Remote"
)

// OffloadingPhase summarizes the state of all the twin namespaces.
// +kubebuilder:validation:Enum=Ready;NoClusterSelected;InProgress;SomeFailed;AllFailed;Terminating
type OffloadingPhase string

const (
	ReadyOffloadingPhase             OffloadingPhase = "Ready"
	NoClusterSelectedOffloadingPhase OffloadingPhase = "NoClusterSelected"
	InProgressOffloadingPhase        OffloadingPhase = "InProgress"
	SomeFailedOffloadingPhase        OffloadingPhase = "SomeFailed"
	AllFailedOffloadingPhase         OffloadingPhase = "AllFailed"
	TerminatingOffloadingPhase       OffloadingPhase = "Terminating"
)

// NamespaceOffloadingSpec selects where a namespace extends and how its pods
// are placed. The naming of the twin namespaces (the mapping strategy and
// the remote name) is immutable: unoffload and offload again to change it.
// The pod offloading strategy and the cluster selector change in place: new
// pods follow the new strategy (running ones stay where they are), and a
// cluster no longer selected loses its twin namespace.
// +kubebuilder:validation:XValidation:rule="!has(self.namespaceMappingStrategy) || self.namespaceMappingStrategy != 'SelectedName' || (has(self.remoteNamespaceName) && size(self.remoteNamespaceName) > 0)",message="remoteNamespaceName is required with the SelectedName mapping strategy"
// +kubebuilder:validation:XValidation:rule="(has(self.namespaceMappingStrategy) && self.namespaceMappingStrategy == 'SelectedName') || !has(self.remoteNamespaceName) || size(self.remoteNamespaceName) == 0",message="remoteNamespaceName is only allowed with the SelectedName mapping strategy"
type NamespaceOffloadingSpec struct {
	// NamespaceMappingStrategy names the remote namespaces.
	// +kubebuilder:default=DefaultName
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="namespaceMappingStrategy is immutable"
	// +optional
	NamespaceMappingStrategy NamespaceMappingStrategy `json:"namespaceMappingStrategy,omitempty"`

	// RemoteNamespaceName is the twin namespace name with SelectedName.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="remoteNamespaceName is immutable"
	// +optional
	RemoteNamespaceName string `json:"remoteNamespaceName,omitempty"`

	// PodOffloadingStrategy places the pods of the namespace.
	// +kubebuilder:default=LocalAndRemote
	// +optional
	PodOffloadingStrategy PodOffloadingStrategy `json:"podOffloadingStrategy,omitempty"`

	// ClusterSelector selects the remote clusters by the labels of their
	// virtual nodes; every peered cluster if it has no terms.
	// +optional
	ClusterSelector corev1.NodeSelector `json:"clusterSelector,omitzero"`
}

// RemoteNamespaceConditionType is the type of a per-cluster condition.
type RemoteNamespaceConditionType string

const (
	// NamespaceReady is True once the twin namespace exists and is ours.
	NamespaceReady RemoteNamespaceConditionType = "Ready"
	// NamespaceOffloadingRequired is True if the cluster is selected.
	NamespaceOffloadingRequired RemoteNamespaceConditionType = "OffloadingRequired"
)

// RemoteNamespaceCondition is one condition of a twin namespace.
type RemoteNamespaceCondition struct {
	Type   RemoteNamespaceConditionType `json:"type"`
	Status corev1.ConditionStatus       `json:"status"`
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// Reason is a CamelCase word users can act on.
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// RemoteNamespaceConditions are the conditions of one twin namespace.
type RemoteNamespaceConditions []RemoteNamespaceCondition

// NamespaceOffloadingStatus reports the twin namespaces.
type NamespaceOffloadingStatus struct {
	// RemoteNamespaceName is the name the twin namespaces have.
	// +optional
	RemoteNamespaceName string `json:"remoteNamespaceName,omitempty"`
	// OffloadingPhase summarizes remoteNamespacesConditions.
	// +optional
	OffloadingPhase OffloadingPhase `json:"offloadingPhase,omitempty"`
	// RemoteNamespacesConditions are keyed by remote cluster id.
	// +optional
	RemoteNamespacesConditions map[string]RemoteNamespaceConditions `json:"remoteNamespacesConditions,omitempty"`
	// ObservedGeneration is the generation the status was computed for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions follow the Kubernetes conventions (Ready).
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// NamespaceOffloading extends its namespace to remote clusters. It must be
// named "offloading".
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=nsof
// +kubebuilder:validation:XValidation:rule="self.metadata.name == 'offloading'",message="a NamespaceOffloading must be named 'offloading'"
// +kubebuilder:printcolumn:name="NamespaceMappingStrategy",type=string,JSONPath=`.spec.namespaceMappingStrategy`
// +kubebuilder:printcolumn:name="PodOffloadingStrategy",type=string,JSONPath=`.spec.podOffloadingStrategy`
// +kubebuilder:printcolumn:name="OffloadingPhase",type=string,JSONPath=`.status.offloadingPhase`
// +kubebuilder:printcolumn:name="RemoteNamespace",type=string,JSONPath=`.status.remoteNamespaceName`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type NamespaceOffloading struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +kubebuilder:default={}
	Spec   NamespaceOffloadingSpec   `json:"spec,omitempty"`
	Status NamespaceOffloadingStatus `json:"status,omitempty"`
}

// NamespaceOffloadingList is a list of NamespaceOffloading.
// +kubebuilder:object:root=true
type NamespaceOffloadingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NamespaceOffloading `json:"items"`
}

func init() {
	SchemeBuilder.Register(&NamespaceOffloading{}, &NamespaceOffloadingList{})
}
