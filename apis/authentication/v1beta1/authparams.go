package v1beta1

// AuthParams are the credentials a provider issues to a consumer.
type AuthParams struct {
	// CA is the provider API server's CA certificate (PEM).
	// +optional
	CA []byte `json:"ca,omitempty"`
	// SignedCRT is the client certificate signed by the provider (PEM).
	// +optional
	SignedCRT []byte `json:"signedCRT,omitempty"`
	// APIServer is the provider API server URL.
	// +optional
	APIServer string `json:"apiServer,omitempty"`
	// TLSServerName is the name the API server's certificate is checked
	// against when it differs from APIServer's host: an in-band peering
	// reaches the provider's API server at an address of the network fabric,
	// which its certificate does not name, and checks it as
	// kubernetes.default.svc, which every cluster's certificate names.
	// +optional
	TLSServerName string `json:"tlsServerName,omitempty"`
	// ProxyURL is an optional HTTP proxy in front of the API server.
	// +optional
	ProxyURL *string `json:"proxyURL,omitempty"`
}
