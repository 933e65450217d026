package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
)

// ResourceSliceClass names a kind of slice; "default" is the only one.
type ResourceSliceClass string

// DefaultResourceSliceClass is the class of slices liqoctl peer creates.
const DefaultResourceSliceClass ResourceSliceClass = "default"

// ResourceSliceConditionType is what a slice condition is about.
// +kubebuilder:validation:Enum=Authentication;Resources
type ResourceSliceConditionType string

const (
	// ResourceSliceAuthentication: the provider issued credentials.
	ResourceSliceAuthentication ResourceSliceConditionType = "Authentication"
	// ResourceSliceResources: the provider granted the resources.
	ResourceSliceResources ResourceSliceConditionType = "Resources"
)

// ResourceSliceConditionStatus is the provider's answer.
// +kubebuilder:validation:Enum=Accepted;Denied
type ResourceSliceConditionStatus string

const (
	ResourceSliceAccepted ResourceSliceConditionStatus = "Accepted"
	ResourceSliceDenied   ResourceSliceConditionStatus = "Denied"
)

// ResourceSliceCondition is one answer of the provider.
type ResourceSliceCondition struct {
	Type   ResourceSliceConditionType   `json:"type"`
	Status ResourceSliceConditionStatus `json:"status"`
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// ResourceSliceSpec is the consumer's request.
type ResourceSliceSpec struct {
	// +optional
	ConsumerClusterID *corev1beta1.ClusterID `json:"consumerClusterID,omitempty"`
	// +optional
	ProviderClusterID *corev1beta1.ClusterID `json:"providerClusterID,omitempty"`
	// Resources requested (cpu, memory, pods, ...), none negative. Any of
	// cpu, memory and pods not named is asked for at its default (4 CPUs,
	// 8Gi of memory, 110 pods), so that the Quota bounds all three.
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(n, type(self[n]) == int ? self[n] >= 0 : !self[n].startsWith('-'))",message="requested resources must not be negative"
	Resources corev1.ResourceList `json:"resources,omitempty"`
	// +optional
	Class ResourceSliceClass `json:"class,omitempty"`
	// CSR for the credentials of this slice (PEM).
	// +optional
	CSR []byte `json:"csr,omitempty"`
}

// ResourceSliceStatus is the provider's answer.
type ResourceSliceStatus struct {
	// +optional
	Conditions []ResourceSliceCondition `json:"conditions,omitempty"`
	// Resources granted; they may be less than requested.
	// +optional
	Resources corev1.ResourceList `json:"resources,omitempty"`
	// +optional
	AuthParams *AuthParams `json:"authParams,omitempty"`
	// +optional
	StorageClasses []corev1beta1.StorageType `json:"storageClasses,omitempty"`
	// +optional
	IngressClasses []corev1beta1.IngressType `json:"ingressClasses,omitempty"`
	// +optional
	LoadBalancerClasses []corev1beta1.LoadBalancerType `json:"loadBalancerClasses,omitempty"`
	// +optional
	NodeLabels map[string]string `json:"nodeLabels,omitempty"`
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// Fit is what the provider's nodes can still take, node by node: a
	// pod bigger than every group's Free runs on none of them.
	// +optional
	Fit *FitSummary `json:"fit,omitempty"`
}

// ResourceSlice is a share of a provider's resources asked by a consumer.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=rslice,categories=liqo
// +kubebuilder:printcolumn:name="Authentication",type=string,JSONPath=`.status.conditions[?(@.type=="Authentication")].status`
// +kubebuilder:printcolumn:name="Resources",type=string,JSONPath=`.status.conditions[?(@.type=="Resources")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ResourceSlice struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec ResourceSliceSpec `json:"spec,omitzero"`
	// +optional
	Status ResourceSliceStatus `json:"status,omitzero"`
}

// ResourceSliceList is a list of ResourceSlice.
// +kubebuilder:object:root=true
type ResourceSliceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceSlice `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ResourceSlice{}, &ResourceSliceList{})
}
