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
	// ProxyURL is an optional HTTP proxy in front of the API server.
	// +optional
	ProxyURL *string `json:"proxyURL,omitempty"`
}
