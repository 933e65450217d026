package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LimitsEnforcement says how a Quota is enforced on ShadowPods.
// +kubebuilder:validation:Enum=None;Soft;Hard
type LimitsEnforcement string

const (
	// NoLimitsEnforcement admits every ShadowPod.
	NoLimitsEnforcement LimitsEnforcement = "None"
	// SoftLimitsEnforcement bounds the sum of requests.
	SoftLimitsEnforcement LimitsEnforcement = "Soft"
	// HardLimitsEnforcement bounds the sum of requests and the sum of limits
	// (a container without a limit counts its request as its limit).
	HardLimitsEnforcement LimitsEnforcement = "Hard"
)

// QuotaSpec bounds what one consumer may run on this provider.
type QuotaSpec struct {
	// User is the consumer's user name on this cluster.
	// +kubebuilder:validation:MinLength=1
	User string `json:"user"`
	// +optional
	LimitsEnforcement LimitsEnforcement `json:"limitsEnforcement,omitempty"`
	// Resources bounds the sum of the consumer's ShadowPods' requests (and
	// of their limits, with Hard enforcement), none negative; a resource
	// not listed is not bounded.
	// +kubebuilder:validation:Type=object
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(n, type(self[n]) == int ? self[n] >= 0 : !self[n].startsWith('-'))",message="quota resources must not be negative"
	Resources corev1.ResourceList `json:"resources"`
	// Cordoned refuses new ShadowPods while keeping the running ones.
	// +optional
	Cordoned *bool `json:"cordoned,omitempty"`
}

// QuotaStatus reports the usage against the quota.
type QuotaStatus struct {
	// +optional
	Used corev1.ResourceList `json:"used,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Quota is the provider-side limit of a consumer's offloaded workloads.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=qt,categories=liqo
// +kubebuilder:printcolumn:name="Enforcement",type=string,JSONPath=`.spec.limitsEnforcement`
// +kubebuilder:printcolumn:name="Cordoned",type=boolean,JSONPath=`.spec.cordoned`
// +kubebuilder:printcolumn:name="User",type=string,JSONPath=`.spec.user`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Quota struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec QuotaSpec `json:"spec"`
	// +optional
	Status QuotaStatus `json:"status,omitzero"`
}

// QuotaList is a list of Quota.
// +kubebuilder:object:root=true
type QuotaList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Quota `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Quota{}, &QuotaList{})
}
