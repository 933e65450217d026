package v1beta1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
)

// AuthzPolicy says how strictly the provider checks a consumer.
// +kubebuilder:validation:Enum=KeysExchange;TolerateNoHandshake
type AuthzPolicy string

const (
	// KeysExchangePolicy requires the signed nonce handshake.
	KeysExchangePolicy AuthzPolicy = "KeysExchange"
	// TolerateNoHandshakePolicy accepts tenants created out of band.
	TolerateNoHandshakePolicy AuthzPolicy = "TolerateNoHandshake"
)

// TenantCondition is the administrative state of a tenant.
// +kubebuilder:validation:Enum=Active;Cordoned;Drained
type TenantCondition string

const (
	// TenantActive may negotiate and consume resources.
	TenantActive TenantCondition = "Active"
	// TenantCordoned keeps what it has but cannot negotiate more.
	TenantCordoned TenantCondition = "Cordoned"
	// TenantDrained can neither consume nor negotiate resources.
	TenantDrained TenantCondition = "Drained"
)

// Active reports whether a tenant in condition c may start pods and be
// granted resources: Active, or unset (the default). Cordoned and Drained
// may not.
func (c TenantCondition) Active() bool {
	return c == "" || c == TenantActive
}

// TenantSpec is what a consumer presents to a provider.
type TenantSpec struct {
	// ClusterID of the consumer.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="ClusterID is immutable"
	ClusterID corev1beta1.ClusterID `json:"clusterID"`
	// +kubebuilder:default=KeysExchange
	// +optional
	AuthzPolicy AuthzPolicy `json:"authzPolicy,omitempty"`
	// PublicKey is the consumer's Ed25519 public key.
	// +optional
	PublicKey []byte `json:"publicKey,omitempty"`
	// CSR is the consumer's certificate signing request (PEM).
	// +optional
	CSR []byte `json:"csr,omitempty"`
	// Signature is the provider's nonce signed with the consumer's key.
	// +optional
	Signature []byte `json:"signature,omitempty"`
	// ProxyURL is the proxy (an http, https or socks5 URL) through which
	// the consumer asks to reach the provider's API server; the Identity
	// generated for it carries it.
	// +optional
	ProxyURL *string `json:"proxyURL,omitempty"`
	// +kubebuilder:default=Active
	// +optional
	TenantCondition TenantCondition `json:"tenantCondition,omitempty"`
}

// TenantStatus reports what the provider granted.
type TenantStatus struct {
	// +optional
	TenantNamespace string `json:"tenantNamespace,omitempty"`
	// +optional
	AuthParams *AuthParams `json:"authParams,omitempty"`
	// ObjectBudget is what the consumer keeps on this provider of the
	// objects its object budget bounds (its ConfigMaps, Secrets, Services,
	// Ingresses, PersistentVolumeClaims, ShadowEndpointSlices and
	// ShadowPods in its twin namespaces, its ResourceSlices and
	// NamespaceMaps), against that budget.
	// +optional
	ObjectBudget *ObjectBudgetUsage `json:"objectBudget,omitempty"`
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ObjectBudgetUsage is a consumer's object budget: used and allowed.
type ObjectBudgetUsage struct {
	// UsedBytes is the size, as JSON, of the objects the consumer keeps.
	UsedBytes resource.Quantity `json:"usedBytes"`
	// MaxBytes is how much it may keep (the provider's
	// --max-tenant-object-bytes).
	MaxBytes resource.Quantity `json:"maxBytes"`
	// UsedObjects is how many it keeps (ShadowPods, which its Quota
	// counts, not among them).
	UsedObjects int64 `json:"usedObjects"`
	// MaxObjects is how many it may keep (--max-tenant-objects).
	MaxObjects int64 `json:"maxObjects"`
}

// Tenant is a consumer cluster, as seen by its provider.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=tn,categories=liqo
// +kubebuilder:printcolumn:name="ClusterID",type=string,JSONPath=`.spec.clusterID`
// +kubebuilder:printcolumn:name="Condition",type=string,JSONPath=`.spec.tenantCondition`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Objects",type=integer,JSONPath=`.status.objectBudget.usedObjects`
// +kubebuilder:printcolumn:name="Bytes",type=string,JSONPath=`.status.objectBudget.usedBytes`
// +kubebuilder:printcolumn:name="Max-Objects",type=integer,priority=1,JSONPath=`.status.objectBudget.maxObjects`
// +kubebuilder:printcolumn:name="Max-Bytes",type=string,priority=1,JSONPath=`.status.objectBudget.maxBytes`
// +kubebuilder:printcolumn:name="Budget-Pressure",type=string,priority=1,JSONPath=`.status.conditions[?(@.type=="ObjectBudgetPressure")].status`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type Tenant struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec TenantSpec `json:"spec"`
	// +optional
	Status TenantStatus `json:"status,omitzero"`
}

// TenantList is a list of Tenant.
// +kubebuilder:object:root=true
type TenantList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Tenant `json:"items"`
}

func init() {
	SchemeBuilder.Register(&Tenant{}, &TenantList{})
}
