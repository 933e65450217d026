package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ShadowPodSpec is the pod a consumer asks the provider to run. Labels and
// annotations are those of the ShadowPod itself.
type ShadowPodSpec struct {
	Pod corev1.PodSpec `json:"pod"`
}

// ShadowPodStatus mirrors the phase of the real pod.
type ShadowPodStatus struct {
	// +kubebuilder:default=Unknown
	// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed;Unknown
	Phase corev1.PodPhase `json:"phase"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ShadowPod is a pod offloaded by a consumer; the provider keeps a real pod
// running for it, even while the consumer is unreachable.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=shp;shpod,categories=liqo
// +kubebuilder:printcolumn:name="Status",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ShadowPod struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ShadowPodSpec `json:"spec"`
	// +optional
	Status ShadowPodStatus `json:"status,omitzero"`
}

// ShadowPodList is a list of ShadowPod.
// +kubebuilder:object:root=true
type ShadowPodList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ShadowPod `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ShadowPod{}, &ShadowPodList{})
}
