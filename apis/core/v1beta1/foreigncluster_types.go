package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RoleType is the role a peered cluster plays towards this one.
// +kubebuilder:validation:Enum=Consumer;Provider;ConsumerAndProvider;Unknown
type RoleType string

const (
	ConsumerRole            RoleType = "Consumer"
	ProviderRole            RoleType = "Provider"
	ConsumerAndProviderRole RoleType = "ConsumerAndProvider"
	UnknownRole             RoleType = "Unknown"
)

// ConditionType is the type of a peering condition.
// +kubebuilder:validation:Enum=APIServerStatus;NetworkConnectionStatus;NetworkGatewayServerStatus;NetworkGatewayClientStatus;NetworkGatewayPresence;NetworkConfigurationStatus;AuthIdentityControlPlaneStatus;AuthTenantStatus;OffloadingVirtualNodeStatus;OffloadingNodeStatus;OffloadingQuotaStatus;OutOfBandPeeringStatus
type ConditionType string

const (
	APIServerStatusCondition                ConditionType = "APIServerStatus"
	NetworkConnectionStatusCondition        ConditionType = "NetworkConnectionStatus"
	NetworkGatewayServerStatusCondition     ConditionType = "NetworkGatewayServerStatus"
	NetworkGatewayClientStatusCondition     ConditionType = "NetworkGatewayClientStatus"
	NetworkGatewayPresenceCondition         ConditionType = "NetworkGatewayPresence"
	NetworkConfigurationStatusCondition     ConditionType = "NetworkConfigurationStatus"
	AuthIdentityControlPlaneStatusCondition ConditionType = "AuthIdentityControlPlaneStatus"
	AuthTenantStatusCondition               ConditionType = "AuthTenantStatus"
	OffloadingVirtualNodeStatusCondition    ConditionType = "OffloadingVirtualNodeStatus"
	OffloadingNodeStatusCondition           ConditionType = "OffloadingNodeStatus"
	// OffloadingQuotaStatusCondition (ours) reports, on a provider, that the
	// consumer was granted resources.
	OffloadingQuotaStatusCondition ConditionType = "OffloadingQuotaStatus"
	// OutOfBandPeeringStatusCondition (ours) reports, on a consumer, the
	// controller manager's progress with an out-of-band peering that
	// liqoctl peer out-of-band asked for.
	OutOfBandPeeringStatusCondition ConditionType = "OutOfBandPeeringStatus"
)

// ConditionStatusType is the state a peering condition reports.
// +kubebuilder:validation:Enum=None;Pending;Established;Error;Ready;NotReady;SomeNotReady
type ConditionStatusType string

const (
	NoneStatus         ConditionStatusType = "None"
	PendingStatus      ConditionStatusType = "Pending"
	EstablishedStatus  ConditionStatusType = "Established"
	ErrorStatus        ConditionStatusType = "Error"
	ReadyStatus        ConditionStatusType = "Ready"
	NotReadyStatus     ConditionStatusType = "NotReady"
	SomeNotReadyStatus ConditionStatusType = "SomeNotReady"
)

// Condition is one aspect of a peering's health.
type Condition struct {
	Type ConditionType `json:"type"`
	// +kubebuilder:default=None
	Status ConditionStatusType `json:"status"`
	// +optional
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty"`
	// +optional
	Reason string `json:"reason,omitempty"`
	// +optional
	Message string `json:"message,omitempty"`
}

// Module is the state of one peering module.
type Module struct {
	Enabled bool `json:"enabled"`
	// +optional
	Conditions []Condition `json:"conditions,omitempty"`
	// Summary is one word for `kubectl get`: Healthy, Unhealthy or Disabled.
	// +optional
	Summary string `json:"summary,omitempty"`
}

// Modules are the peering modules.
type Modules struct {
	Networking     Module `json:"networking"`
	Authentication Module `json:"authentication"`
	Offloading     Module `json:"offloading"`
}

// TenantNamespaceType names the tenant namespaces of a peering on both sides.
type TenantNamespaceType struct {
	// +optional
	Local string `json:"local,omitempty"`
	// +optional
	Remote string `json:"remote,omitempty"`
}

// ForeignClusterSpec identifies the peered cluster.
type ForeignClusterSpec struct {
	// ClusterID of the peered cluster.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="ClusterID field is immutable"
	ClusterID ClusterID `json:"clusterID"`
}

// ForeignClusterStatus is the state of the peering with one cluster.
type ForeignClusterStatus struct {
	// +kubebuilder:default=Unknown
	Role RoleType `json:"role"`
	// +optional
	Modules Modules `json:"modules,omitzero"`
	// +optional
	APIServerURL string `json:"apiServerUrl,omitempty"`
	// +optional
	ForeignProxyURL string `json:"foreignProxyUrl,omitempty"`
	// +optional
	TenantNamespace TenantNamespaceType `json:"tenantNamespace,omitzero"`
	// Conditions not tied to a module (APIServerStatus,
	// OutOfBandPeeringStatus).
	// +optional
	Conditions []Condition `json:"conditions,omitempty"`
}

// ForeignCluster is a cluster this one peers with, in either role.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster,shortName=fc,categories=liqo
// +kubebuilder:printcolumn:name="Role",type=string,JSONPath=`.status.role`
// +kubebuilder:printcolumn:name="Authentication",type=string,JSONPath=`.status.modules.authentication.summary`
// +kubebuilder:printcolumn:name="Offloading",type=string,JSONPath=`.status.modules.offloading.summary`
// +kubebuilder:printcolumn:name="Networking",type=string,JSONPath=`.status.modules.networking.summary`
// +kubebuilder:printcolumn:name="ClusterID",type=string,JSONPath=`.spec.clusterID`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ForeignCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ForeignClusterSpec `json:"spec"`
	// +optional
	Status ForeignClusterStatus `json:"status,omitzero"`
}

// ForeignClusterList is a list of ForeignCluster.
// +kubebuilder:object:root=true
type ForeignClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ForeignCluster `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ForeignCluster{}, &ForeignClusterList{})
}
