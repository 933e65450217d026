package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

// ExportRecordAcceptedCondition is the condition the receiver of an
// ExportRecord sets on it: True when it imports the record, False with the
// reason it refused it.
const ExportRecordAcceptedCondition = "Accepted"

// ExportRecordSpec is one cluster's export of a Service, as its peers
// import it: the properties the clusterset merges (package merge) and the
// cluster's ready endpoints.
type ExportRecordSpec struct {
	// Namespace and Service name the exported Service: namespace sameness
	// makes it the same Service in every cluster of the clusterset.
	// +kubebuilder:validation:MaxLength=63
	Namespace string `json:"namespace"`
	// +kubebuilder:validation:MaxLength=63
	Service string `json:"service"`
	// Created is when the ServiceExport was created: the oldest export
	// wins a conflict.
	Created metav1.Time `json:"created"`
	// +kubebuilder:validation:Enum=ClusterSetIP;Headless
	Type mcsv1beta1.ServiceImportType `json:"type"`
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	Ports []mcsv1beta1.ServicePort `json:"ports,omitempty"`
	// +optional
	SessionAffinity corev1.ServiceAffinity `json:"sessionAffinity,omitempty"`
	// +optional
	SessionAffinityConfig *corev1.SessionAffinityConfig `json:"sessionAffinityConfig,omitempty"`
	// +optional
	InternalTrafficPolicy *corev1.ServiceInternalTrafficPolicy `json:"internalTrafficPolicy,omitempty"`
	// +optional
	TrafficDistribution *string `json:"trafficDistribution,omitempty"`
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=2
	IPFamilies []corev1.IPFamily `json:"ipFamilies,omitempty"`
	// ExportedLabels and ExportedAnnotations are the ServiceExport's, which
	// the ServiceImports carry.
	// +optional
	ExportedLabels map[string]string `json:"exportedLabels,omitempty"`
	// +optional
	ExportedAnnotations map[string]string `json:"exportedAnnotations,omitempty"`
	// Endpoints are the ready endpoints of the Service in the exporting
	// cluster, at the addresses they have there, of the Service's primary
	// IP family.
	Endpoints EndpointSliceTemplate `json:"endpoints"`
}

// ExportRecordStatus is the receiver's verdict on the record.
type ExportRecordStatus struct {
	// Conditions are bounded: the consumer writes the status of the
	// provider's records it reads, in its tenant namespace there, and
	// those count against no budget.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ExportRecord carries one cluster's ServiceExport to a direct peer,
// through the consumer's tenant namespace on the provider (see package
// pkg/mcs): the consumer writes its records there, the provider writes
// its own beside them in its own cluster, each reads the other's. Its
// source-cluster label (multicluster.kubernetes.io/source-cluster) names
// the exporting cluster, and its receiver checks it.
//
// A kind of its own, rather than ConfigMaps or EndpointSlices: the Service
// and its endpoints change together in one object, so a receiver never
// imports a Service with another version's endpoints; the consumer's
// rights on the provider name this kind only (writing ConfigMaps or
// EndpointSlices there would reach objects others act on: kube-proxy and
// the DNS watch every EndpointSlice); and the API server checks its shape
// before any controller reads it.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=exr,categories=liqo
// +kubebuilder:printcolumn:name="Source",type=string,JSONPath=`.metadata.labels['multicluster\.kubernetes\.io/source-cluster']`
// +kubebuilder:printcolumn:name="Namespace",type=string,JSONPath=`.spec.namespace`
// +kubebuilder:printcolumn:name="Service",type=string,JSONPath=`.spec.service`
// +kubebuilder:printcolumn:name="Type",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="Accepted",type=string,JSONPath=`.status.conditions[?(@.type=="Accepted")].status`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Accepted")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ExportRecord struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ExportRecordSpec `json:"spec"`
	// +optional
	Status ExportRecordStatus `json:"status,omitzero"`
}

// ExportRecordList is a list of ExportRecord.
// +kubebuilder:object:root=true
type ExportRecordList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ExportRecord `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ExportRecord{}, &ExportRecordList{})
}
