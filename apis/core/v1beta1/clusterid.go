package v1beta1

// ClusterID identifies a cluster among its peers: a DNS label.
// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
// +kubebuilder:validation:MaxLength=63
type ClusterID string

// StorageType is a storage class a provider offers.
type StorageType struct {
	StorageClassName string `json:"storageClassName"`
	// +optional
	Default bool `json:"default,omitempty"`
}

// IngressType is an ingress class a provider offers.
type IngressType struct {
	IngressClassName string `json:"ingressClassName"`
	// +optional
	Default bool `json:"default,omitempty"`
}

// LoadBalancerType is a load-balancer class a provider offers.
type LoadBalancerType struct {
	LoadBalancerClassName string `json:"loadBalancerClassName"`
	// +optional
	Default bool `json:"default,omitempty"`
}
