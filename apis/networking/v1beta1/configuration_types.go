package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NetworkCIDRsConfiguredCondition is the condition type a Configuration
// reports as True once every CIDR in spec.remote has its remapped twin in
// status.remote (and ObservedGeneration says for which spec). Users wait for
// it with `kubectl wait --for=condition=NetworkCIDRsConfigured`.
const NetworkCIDRsConfiguredCondition = "NetworkCIDRsConfigured"

// Reasons of a Configuration's NetworkCIDRsConfigured condition.
const (
	ConfigurationReasonConfigured     = "CIDRsConfigured"
	ConfigurationReasonWaiting        = "WaitingForNetworks"
	ConfigurationReasonNotAllocated   = "NetworkNotAllocated"
	ConfigurationReasonLocalUnknown   = "LocalCIDRsUnknown"
	ConfigurationReasonRemoteNotValid = "InvalidRemoteCIDR"
	// ConfigurationReasonRemoteRefused: the peer announced a network it may not
	// (pkg/ipam's ParsePeerCIDR says which rule).
	ConfigurationReasonRemoteRefused = "RemoteCIDRRefused"
	// ConfigurationReasonOverlapsLocal: a network allocated to the peer overlaps one
	// this cluster routes itself (a node joined in it since): nothing is
	// routed to the peer until the Configuration is made again.
	ConfigurationReasonOverlapsLocal = "RemappedCIDROverlapsLocal"
)

// ConfiguredLabel is set to "true" on a Configuration whose CIDRs are
// configured, alongside the condition, for the tools of Liqo v1.0 and v1.1
// that read the label instead.
const ConfiguredLabel = "configuration.liqo.io/configured"

// ClusterConfigCIDR lists the networks of one cluster.
// +kubebuilder:validation:XValidation:rule="!has(self.pod) || self.pod.all(c, self.pod.exists_one(d, d == c))",message="pod CIDRs must not repeat"
// +kubebuilder:validation:XValidation:rule="!has(self.external) || self.external.all(c, self.external.exists_one(d, d == c))",message="external CIDRs must not repeat"
type ClusterConfigCIDR struct {
	// Pod lists the networks the cluster's pods take their addresses from.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	Pod []CIDR `json:"pod,omitempty"`
	// External lists the networks of the cluster's external CIDR: the
	// addresses under which the cluster exposes to its peers what is not a
	// pod (nodes, load balancers, other hosts), through IP objects.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	External []CIDR `json:"external,omitempty"`
}

// ClusterConfig is the network configuration of one cluster.
type ClusterConfig struct {
	// CIDR holds the cluster's networks.
	CIDR ClusterConfigCIDR `json:"cidr"`
}

// ConfigurationSpec holds the networks of both ends of a peering.
type ConfigurationSpec struct {
	// Local holds this cluster's own networks. The controller fills it in;
	// users leave it out.
	// +optional
	Local *ClusterConfig `json:"local,omitempty"`
	// Remote holds the peer's networks as the peer itself uses them. It needs
	// at least one pod CIDR and one external CIDR.
	// +kubebuilder:validation:XValidation:rule="has(self.cidr.pod) && size(self.cidr.pod) > 0",message="remote.cidr.pod needs at least one CIDR: the peer's pod network"
	// +kubebuilder:validation:XValidation:rule="has(self.cidr.external) && size(self.cidr.external) > 0",message="remote.cidr.external needs at least one CIDR: the peer's external network"
	Remote ClusterConfig `json:"remote"`
}

// ConfigurationStatus tells how this cluster sees the peer's networks.
type ConfigurationStatus struct {
	// Remote holds the networks under which this cluster reaches the peer:
	// each entry is the remapped twin of the entry at the same index in
	// spec.remote, equal to it when it overlaps nothing local and another
	// free network of the same size when it does.
	// +optional
	Remote *ClusterConfig `json:"remote,omitempty"`
	// Conditions report the progress of the configuration; see
	// NetworkCIDRsConfigured.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Configuration describes the network of a peered cluster: its pod and
// external CIDRs and, once the local IPAM has allocated them, the CIDRs under
// which this cluster reaches them. Create one in each cluster of a peering, in
// the peer's tenant namespace, named after the peer's cluster ID and holding
// the peer's CIDRs.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=conf,categories=liqo
// +kubebuilder:printcolumn:name="Remote Pod CIDR",type=string,JSONPath=`.spec.remote.cidr.pod`
// +kubebuilder:printcolumn:name="Remapped Pod CIDR",type=string,JSONPath=`.status.remote.cidr.pod`
// +kubebuilder:printcolumn:name="Configured",type=string,JSONPath=`.status.conditions[?(@.type=="NetworkCIDRsConfigured")].status`
// +kubebuilder:printcolumn:name="Remote External CIDR",type=string,JSONPath=`.spec.remote.cidr.external`,priority=1
// +kubebuilder:printcolumn:name="Remapped External CIDR",type=string,JSONPath=`.status.remote.cidr.external`,priority=1
// +kubebuilder:printcolumn:name="ClusterID",type=string,JSONPath=`.metadata.labels.liqo\.io/remote-cluster-id`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Configuration struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ConfigurationSpec `json:"spec"`
	// +optional
	Status ConfigurationStatus `json:"status,omitzero"`
}

// ConfigurationList is a list of Configuration.
// +kubebuilder:object:root=true
type ConfigurationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Configuration `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Configuration{}, &ConfigurationList{})
}
