package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ShadowPodSpec is the pod a consumer asks the provider to run. Labels and
// annotations are those of the ShadowPod itself.
type ShadowPodSpec struct {
	// These rules are what the API server's CEL cost budget allows on a
	// PodSpec, whose lists, maps and strings carry no size bounds (it is
	// core/v1's, and markers cannot reach into it), and they spend nearly
	// all of it (about 90M of the 100M a CRD may estimate): the pod-level
	// maps and the overhead are checked for negative quantities of every
	// resource; the containers' and init containers' only for cpu and
	// memory, by name, as iterating a container's maps costs a hundred
	// times the budget. The provider's admission webhook checks every
	// quantity of every container. A container's quantity, an int or a
	// string matching the schema's quantity pattern, is negative exactly
	// when the string sorts within ['-', '.'), i.e. starts with '-':
	// startsWith and string() on an unbounded string are estimated as
	// unbounded, comparisons are not. Transition rules compare quantities
	// as written, so "1" and "1000m" differ there; the webhook compares
	// amounts. Optional fields are compared as optionals, so that a Go
	// client's read-modify-write, which writes "resources: {}" where a
	// manifest had none, changes nothing.
	// +kubebuilder:validation:XValidation:rule="!has(self.resources) || !has(self.resources.requests) || self.resources.requests.all(n, type(self.resources.requests[n]) == int ? self.resources.requests[n] >= 0 : !self.resources.requests[n].startsWith('-'))",message="spec.pod.resources.requests must not be negative"
	// +kubebuilder:validation:XValidation:rule="!has(self.resources) || !has(self.resources.limits) || self.resources.limits.all(n, type(self.resources.limits[n]) == int ? self.resources.limits[n] >= 0 : !self.resources.limits[n].startsWith('-'))",message="spec.pod.resources.limits must not be negative"
	// +kubebuilder:validation:XValidation:rule="!has(self.overhead) || self.overhead.all(n, type(self.overhead[n]) == int ? self.overhead[n] >= 0 : !self.overhead[n].startsWith('-'))",message="spec.pod.overhead must not be negative"
	// +kubebuilder:validation:XValidation:rule="self.containers.all(c, [c.?resources.?requests.?cpu.orValue(0), c.?resources.?requests.?memory.orValue(0)].all(q, type(q) == int ? q >= 0 : q < '-' || q >= '.'))",message="a container's requests.cpu and requests.memory must not be negative",fieldPath=".containers"
	// +kubebuilder:validation:XValidation:rule="self.containers.all(c, [c.?resources.?limits.?cpu.orValue(0), c.?resources.?limits.?memory.orValue(0)].all(q, type(q) == int ? q >= 0 : q < '-' || q >= '.'))",message="a container's limits.cpu and limits.memory must not be negative",fieldPath=".containers"
	// +kubebuilder:validation:XValidation:rule="!has(self.initContainers) || self.initContainers.all(c, [c.?resources.?requests.?cpu.orValue(0), c.?resources.?requests.?memory.orValue(0)].all(q, type(q) == int ? q >= 0 : q < '-' || q >= '.'))",message="an init container's requests.cpu and requests.memory must not be negative",fieldPath=".initContainers"
	// +kubebuilder:validation:XValidation:rule="!has(self.initContainers) || self.initContainers.all(c, [c.?resources.?limits.?cpu.orValue(0), c.?resources.?limits.?memory.orValue(0)].all(q, type(q) == int ? q >= 0 : q < '-' || q >= '.'))",message="an init container's limits.cpu and limits.memory must not be negative",fieldPath=".initContainers"
	// +kubebuilder:validation:XValidation:rule="self.containers.map(c, c.?resources.?requests) == oldSelf.containers.map(c, c.?resources.?requests)",message="the containers' resources of a ShadowPod are immutable: the real pod keeps those it was created with (delete and recreate the ShadowPod to change them)"
	// +kubebuilder:validation:XValidation:rule="self.containers.map(c, c.?resources.?limits) == oldSelf.containers.map(c, c.?resources.?limits)",message="the containers' resources of a ShadowPod are immutable: the real pod keeps those it was created with (delete and recreate the ShadowPod to change them)"
	// +kubebuilder:validation:XValidation:rule="has(self.initContainers) == has(oldSelf.initContainers) && (!has(self.initContainers) || self.initContainers.map(c, c.?resources.?requests) == oldSelf.initContainers.map(c, c.?resources.?requests))",message="the init containers' resources of a ShadowPod are immutable: the real pod keeps those it was created with (delete and recreate the ShadowPod to change them)"
	// +kubebuilder:validation:XValidation:rule="has(self.initContainers) == has(oldSelf.initContainers) && (!has(self.initContainers) || self.initContainers.map(c, c.?resources.?limits) == oldSelf.initContainers.map(c, c.?resources.?limits))",message="the init containers' resources of a ShadowPod are immutable: the real pod keeps those it was created with (delete and recreate the ShadowPod to change them)"
	// +kubebuilder:validation:XValidation:rule="[self.?resources.?requests.orValue({}), self.?resources.?limits.orValue({}), self.?overhead.orValue({})] == [oldSelf.?resources.?requests.orValue({}), oldSelf.?resources.?limits.orValue({}), oldSelf.?overhead.orValue({})]",message="the pod-level resources and overhead of a ShadowPod are immutable: the real pod keeps those it was created with (delete and recreate the ShadowPod to change them)"

	// Pod is the spec of the real pod. Its resources (every container's,
	// the pod-level ones and the overhead) are fixed at creation, as the
	// real pod's are: the consumer's quota counts them until the ShadowPod
	// is gone. No quantity may be negative.
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
