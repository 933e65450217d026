package peeringuser

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/util/cert"
)

// Token is the --auth-token of liqoctl peer out-of-band: the CA that the
// provider's API server certificate must chain to, and the peering user's
// ServiceAccount token. Its text form is the CA certificates (DER,
// concatenated) in unpadded base64url, a dot, and the ServiceAccount token.
//
// The CA travels whole rather than as a hash (as kubeadm's
// --discovery-token-ca-cert-hash does): kube-apiserver sends only its
// serving certificate in the handshake, so a hash could only be checked
// against a CA fetched anonymously, which needs anonymous access and a
// published copy (kubeadm's cluster-info). With the CA in the token,
// nothing is trusted on first use and nothing is fetched without it.
type Token struct {
	// CA is PEM: one or more certificates.
	CA []byte
	// Bearer is the ServiceAccount token.
	Bearer string
}

// String is the token's text form.
func (t Token) String() string {
	var der []byte
	for rest := t.CA; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if b.Type == "CERTIFICATE" {
			der = append(der, b.Bytes...)
		}
	}
	return base64.RawURLEncoding.EncodeToString(der) + "." + t.Bearer
}

// ParseToken reads a token's text form.
func ParseToken(s string) (Token, error) {
	const what = "--auth-token is not a token printed by liqoctl generate peer-command"
	ca, bearer, ok := strings.Cut(strings.TrimSpace(s), ".")
	if !ok || ca == "" || bearer == "" || strings.ContainsAny(bearer, " \t\r\n") {
		return Token{}, fmt.Errorf("%s: want CA.TOKEN", what)
	}
	der, err := base64.RawURLEncoding.DecodeString(ca)
	if err != nil {
		return Token{}, fmt.Errorf("%s: its CA part is not base64url: %w", what, err)
	}
	certs, err := x509.ParseCertificates(der)
	if err != nil || len(certs) == 0 {
		return Token{}, fmt.Errorf("%s: its CA part holds no certificate (%v)", what, err)
	}
	pemCA, err := cert.EncodeCertificates(certs...)
	if err != nil {
		return Token{}, fmt.Errorf("%s: %w", what, err)
	}
	return Token{CA: pemCA, Bearer: bearer}, nil
}

// RESTConfig is the configuration of a client of the API server at
// serverURL authenticating with the token.
func (t Token) RESTConfig(serverURL string) *rest.Config {
	return &rest.Config{Host: serverURL, BearerToken: t.Bearer, TLSClientConfig: rest.TLSClientConfig{CAData: t.CA}}
}

// Kubeconfig renders the token as a kubeconfig for the API server at
// serverURL (through proxyURL, if not empty), naming the cluster and
// context after clusterID.
func (t Token) Kubeconfig(serverURL, proxyURL, clusterID, user, namespace string) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[clusterID] = &clientcmdapi.Cluster{Server: serverURL, CertificateAuthorityData: t.CA, ProxyURL: proxyURL}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: t.Bearer}
	cfg.Contexts[clusterID] = &clientcmdapi.Context{Cluster: clusterID, AuthInfo: user, Namespace: namespace}
	cfg.CurrentContext = clusterID
	return clientcmd.Write(*cfg)
}

// ErrUntrustedServer is returned by VerifyServer when the server's
// certificate does not chain to the expected CA.
var ErrUntrustedServer = errors.New("the API server's certificate is not signed by the CA in the token")

// VerifyServer makes a TLS handshake with the API server at serverURL
// trusting only the certificates in caPEM, and closes the connection: it
// sends no request, hence no credential. A server whose certificate does
// not chain to the CA (or does not name the host) fails with
// ErrUntrustedServer, one that cannot be reached with its dial error.
func VerifyServer(ctx context.Context, serverURL string, caPEM []byte, timeout time.Duration) error {
	return VerifyServerVia(ctx, serverURL, "", caPEM, timeout)
}

// VerifyServerVia is VerifyServer through the proxy proxyURL (an http,
// https or socks5 URL, as client-go takes), or directly if it is empty:
// the proxy sees only the TLS handshake, which it cannot alter unnoticed.
func VerifyServerVia(ctx context.Context, serverURL, proxyURL string, caPEM []byte, timeout time.Duration) error {
	u, err := url.Parse(serverURL)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("%q is not an https:// URL", serverURL)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return errors.New("no CA certificate to verify the API server with")
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "443"
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	raw, err := dial(ctx, proxyURL, net.JoinHostPort(host, port), timeout)
	if err != nil {
		return err
	}
	conn := tls.Client(raw, &tls.Config{RootCAs: pool, ServerName: host, MinVersion: tls.VersionTLS12})
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	err = conn.HandshakeContext(ctx)
	_ = conn.Close()
	if err == nil {
		return nil
	}
	var verr *tls.CertificateVerificationError
	var herr x509.HostnameError
	if errors.As(err, &verr) || errors.As(err, &herr) {
		return fmt.Errorf("%w (%s): %v", ErrUntrustedServer, serverURL, err)
	}
	return err
}
