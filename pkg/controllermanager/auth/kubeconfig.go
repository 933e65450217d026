package auth

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/identity"
)

// BuildKubeconfig renders the kubeconfig a consumer uses to reach its
// provider: the provider's CA and server from the AuthParams, the signed
// certificate and the cluster's TLS client key (never its identity key).
func BuildKubeconfig(p *authv1beta1.AuthParams, key ed25519.PrivateKey, user string) ([]byte, error) {
	if p == nil || p.APIServer == "" || len(p.SignedCRT) == 0 {
		return nil, fmt.Errorf("the identity has no API server or certificate yet")
	}
	// A certificate for another key (one issued before the client key was
	// split from the identity, or a foreign one) would only fail in the TLS
	// handshake: say so here instead.
	cert, err := parseCert(p.SignedCRT)
	if err != nil {
		return nil, fmt.Errorf("the identity's signedCrt: %w", err)
	}
	if pk, ok := cert.PublicKey.(ed25519.PublicKey); !ok || !pk.Equal(key.Public()) {
		return nil, fmt.Errorf("the identity's signedCrt is not for this cluster's TLS client key (Secret %s); run liqoctl peer again to have the provider issue a new one",
			identity.ClientKeySecretName)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	cluster := &clientcmdapi.Cluster{Server: p.APIServer, CertificateAuthorityData: p.CA, TLSServerName: p.TLSServerName}
	// The proxy comes with the Identity (the consumer's liqoctl, or the
	// manifest its administrator applied): checked here, where it is used.
	if p.ProxyURL != nil && *p.ProxyURL != "" {
		if err := authv1beta1.ValidateProxyURL(*p.ProxyURL); err != nil {
			return nil, fmt.Errorf("the identity's proxyURL: %w", err)
		}
		cluster.ProxyURL = *p.ProxyURL
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["provider"] = cluster
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{
		ClientCertificateData: p.SignedCRT,
		ClientKeyData:         pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}),
	}
	cfg.Contexts["provider"] = &clientcmdapi.Context{Cluster: "provider", AuthInfo: user}
	cfg.CurrentContext = "provider"
	return clientcmd.Write(*cfg)
}
