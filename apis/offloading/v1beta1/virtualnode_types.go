package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
)

// OffloadingPatch adjusts the pods offloaded through a virtual node.
type OffloadingPatch struct {
	// +optional
	AnnotationsNotReflected []string `json:"annotationsNotReflected,omitempty"`
	// +optional
	LabelsNotReflected []string `json:"labelsNotReflected,omitempty"`
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// +optional
	Affinity *Affinity `json:"affinity,omitempty"`
	// +optional
	RuntimeClassName *string `json:"runtimeClassName,omitempty"`
}

// Affinity is the node affinity given to offloaded pods remotely.
type Affinity struct {
	// +optional
	NodeAffinity *corev1.NodeAffinity `json:"nodeAffinity,omitempty"`
}

// VirtualNodeSpec describes the node that represents a provider.
type VirtualNodeSpec struct {
	// ClusterID of the provider.
	// +optional
	ClusterID corev1beta1.ClusterID `json:"clusterID,omitempty"`
	// +optional
	OffloadingPatch *OffloadingPatch `json:"offloadingPatch,omitempty"`
	// CreateNode creates the Node object (default true).
	// +optional
	CreateNode *bool `json:"createNode,omitempty"`
	// +optional
	DisableNetworkCheck *bool `json:"disableNetworkCheck,omitempty"`
	// KubeconfigSecretRef holds the credentials for the provider.
	// +optional
	KubeconfigSecretRef *corev1.LocalObjectReference `json:"kubeconfigSecretRef,omitempty"`
	// ResourceQuota is the capacity the node advertises.
	// +optional
	ResourceQuota corev1.ResourceQuotaSpec `json:"resourceQuota,omitzero"`
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
	// +optional
	Taints []corev1.Taint `json:"taints,omitempty"`
	// +optional
	StorageClasses []corev1beta1.StorageType `json:"storageClasses,omitempty"`
	// +optional
	IngressClasses []corev1beta1.IngressType `json:"ingressClasses,omitempty"`
	// +optional
	LoadBalancerClasses []corev1beta1.LoadBalancerType `json:"loadBalancerClasses,omitempty"`
}

// VirtualNodeConditionType is a part of the virtual node.
// +kubebuilder:validation:Enum=VirtualKubelet;Node
type VirtualNodeConditionType string

const (
	VirtualKubeletCondition VirtualNodeConditionType = "VirtualKubelet"
	NodeCondition           VirtualNodeConditionType = "Node"
)

// VirtualNodeConditionStatus is the lifecycle state of that part.
// +kubebuilder:validation:Enum=None;Running;Creating;Draining;Deleting
type VirtualNodeConditionStatus string

const (
	NoneVirtualNodeStatus     VirtualNodeConditionStatus = "None"
	RunningVirtualNodeStatus  VirtualNodeConditionStatus = "Running"
	CreatingVirtualNodeStatus VirtualNodeConditionStatus = "Creating"
	DrainingVirtualNodeStatus VirtualNodeConditionStatus = "Draining"
	DeletingVirtualNodeStatus VirtualNodeConditionStatus = "Deleting"
)

// VirtualNodeCondition is the state of one part of the virtual node.
type VirtualNodeCondition struct {
	Type VirtualNodeConditionType `json:"type"`
	// +kubebuilder:default=None
	Status VirtualNodeConditionStatus `json:"status"`
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// VirtualNodeStatus reports the virtual kubelet and its Node.
type VirtualNodeStatus struct {
	// +optional
	Conditions []VirtualNodeCondition `json:"conditions,omitempty"`
}

// VirtualNode is a Node backed by a provider cluster.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=vn;vnode,categories=liqo
// +kubebuilder:printcolumn:name="ClusterID",type=string,JSONPath=`.spec.clusterID`
// +kubebuilder:printcolumn:name="Create Node",type=boolean,JSONPath=`.spec.createNode`
// +kubebuilder:printcolumn:name="Node",type=string,JSONPath=`.status.conditions[?(@.type=="Node")].status`
// +kubebuilder:printcolumn:name="VirtualKubelet",type=string,JSONPath=`.status.conditions[?(@.type=="VirtualKubelet")].status`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type VirtualNode struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec VirtualNodeSpec `json:"spec,omitzero"`
	// +optional
	Status VirtualNodeStatus `json:"status,omitzero"`
}

// VirtualNodeList is a list of VirtualNode.
// +kubebuilder:object:root=true
type VirtualNodeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []VirtualNode `json:"items"`
}

func init() {
	SchemeBuilder.Register(&VirtualNode{}, &VirtualNodeList{})
}
