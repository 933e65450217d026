package testbed

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"time"

	"k8s.io/client-go/util/cert"
)

// The aggregation layer: the API server proxies the requests for an
// APIService (metrics.k8s.io, served by metrics-server) with a client
// certificate of its own CA, as kubeadm sets it up, and names the caller in
// headers the extension server trusts only from that CA's certificates. A
// CA of its own, not the cluster's: the cluster's signs CSRs, and an
// approved CSR must not become a way to speak for any user.

// frontProxyClientName is the API server's name as the aggregator's client.
const frontProxyClientName = "front-proxy-client"

func (p *pki) frontProxyCAFile() string     { return p.path("front-proxy-ca.crt") }
func (p *pki) frontProxyClientCert() string { return p.path("front-proxy-client.crt") }
func (p *pki) frontProxyClientKey() string  { return p.path("front-proxy-client.key") }

// frontProxy makes the front-proxy CA and the API server's client
// certificate signed by it.
func (p *pki) frontProxy(cluster string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	ca, err := cert.NewSelfSignedCACert(cert.Config{CommonName: "liqo-testbed-" + cluster + "-front-proxy-ca", NotBefore: time.Now().Add(-time.Hour)}, key)
	if err != nil {
		return fmt.Errorf("making the front-proxy CA: %w", err)
	}
	caPEM, err := cert.EncodeCertificates(ca)
	if err != nil {
		return err
	}
	if err := writePEM(p.frontProxyCAFile(), caPEM); err != nil {
		return err
	}
	client := &x509.Certificate{
		Subject:     pkix.Name{CommonName: frontProxyClientName},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	_, _, err = p.issueBy(ca, key, client, p.frontProxyClientCert(), p.frontProxyClientKey())
	return err
}

// frontProxyArgs are the API server's aggregation-layer flags.
func (p *pki) frontProxyArgs() []string {
	return []string{
		"--requestheader-client-ca-file=" + p.frontProxyCAFile(),
		"--requestheader-allowed-names=" + frontProxyClientName,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + p.frontProxyClientCert(),
		"--proxy-client-key-file=" + p.frontProxyClientKey(),
	}
}
