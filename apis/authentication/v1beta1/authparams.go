package v1beta1

import (
	"fmt"
	"net/url"
)

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
	// ProxyURL is an optional proxy (an http, https or socks5 URL) through
	// which the consumer reaches the API server.
	// +optional
	ProxyURL *string `json:"proxyURL,omitempty"`
}

// ValidateProxyURL checks a proxy URL as client-go will use it (the
// kubeconfig's proxy-url): an http, https or socks5 scheme and a host. A
// URL client-go cannot use would otherwise fail every request later, far
// from where it was given.
func ValidateProxyURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %w", s, err)
	}
	switch u.Scheme {
	case "http", "https", "socks5":
	default:
		return fmt.Errorf("%q: the scheme must be http, https or socks5, as in http://proxy.example:3128", s)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("%q has no host, as in %s://proxy.example:3128", s, u.Scheme)
	}
	return nil
}
