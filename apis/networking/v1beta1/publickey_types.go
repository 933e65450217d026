package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PublicKeyLength is the size in bytes of a WireGuard (Curve25519) public
// key.
const PublicKeyLength = 32

// PublicKeyAppliedCondition is the condition type a PublicKey reports as
// True once the local gateway has configured the key as its peer's.
const PublicKeyAppliedCondition = "Applied"

// PublicKeySpec holds the peer gateway's public key.
type PublicKeySpec struct {
	// PublicKey is the peer gateway's WireGuard public key: the 32 raw bytes,
	// which JSON and YAML carry in base64 (the 44-character form `wg
	// pubkey` prints). The check is on that text, not in CEL: the API
	// server's CEL decodes format-byte strings with the URL-safe alphabet
	// and refuses a standard key holding '+' or '/'.
	// +kubebuilder:validation:MinLength=44
	// +kubebuilder:validation:MaxLength=44
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$`
	PublicKey []byte `json:"publicKey"`
}

// PublicKeyStatus tells whether the key is in use.
type PublicKeyStatus struct {
	// Conditions report whether the local gateway took up the key; see
	// Applied.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// PublicKey holds the public key of a peer's gateway, so that the local
// gateway accepts (or dials) that peer only. It lives in the peer's tenant
// namespace, named after the peer's cluster ID and labelled
// networking.liqo.io/gateway-resource=true; its resource name is
// "publickeies", as in Liqo.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=publickeies,shortName=pk;pkey;pkies,categories=liqo
// +kubebuilder:printcolumn:name="ClusterID",type=string,JSONPath=`.metadata.labels.liqo\.io/remote-cluster-id`
// +kubebuilder:printcolumn:name="Applied",type=string,JSONPath=`.status.conditions[?(@.type=="Applied")].status`
// +kubebuilder:printcolumn:name="Key",type=string,JSONPath=`.spec.publicKey`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type PublicKey struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec PublicKeySpec `json:"spec"`
	// +optional
	Status PublicKeyStatus `json:"status,omitzero"`
}

// PublicKeyList is a list of PublicKey.
// +kubebuilder:object:root=true
type PublicKeyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PublicKey `json:"items"`
}

func init() {
	SchemeBuilder.Register(&PublicKey{}, &PublicKeyList{})
}
