package testbed

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// pki is a cluster's certificate authority and the credentials signed by it.
// The same CA signs CSRs through the certificates API, so certificates issued
// that way authenticate against the API server, as on kubeadm clusters.
type pki struct {
	dir string

	caCert *x509.Certificate
	caKey  crypto.Signer
	caPEM  []byte

	adminCertPEM, adminKeyPEM []byte
}

func (p *pki) path(name string) string { return filepath.Join(p.dir, name) }

// Paths of the files the control-plane components read.
func (p *pki) caFile() string        { return p.path("ca.crt") }
func (p *pki) caKeyFile() string     { return p.path("ca.key") }
func (p *pki) servingCert() string   { return p.path("apiserver.crt") }
func (p *pki) servingKey() string    { return p.path("apiserver.key") }
func (p *pki) saKeyFile() string     { return p.path("sa.key") }
func (p *pki) saPubFile() string     { return p.path("sa.pub") }
func (p *pki) kubeletCert() string   { return p.path("kubelet-client.crt") }
func (p *pki) kubeletKey() string    { return p.path("kubelet-client.key") }
func (p *pki) kwokServerCrt() string { return p.path("kwok.crt") }
func (p *pki) kwokServerKey() string { return p.path("kwok.key") }

// WebhookClientName is the common name of the client certificate the
// testbed's API servers present to every admission webhook, signed by the
// cluster's CA: a webhook server requiring it knows the API server calls.
const WebhookClientName = "kube-apiserver-webhook-client"

// admissionConfig is the API server's AdmissionConfiguration.
func (p *pki) admissionConfig() string { return p.path("admission.yaml") }

// newPKI creates a fresh CA and every certificate a testbed cluster needs.
func newPKI(dir, cluster string, serverIPs ...net.IP) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	p := &pki{dir: dir}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	// Valid for ten years, from an hour ago as the leaves.
	p.caCert, err = cert.NewSelfSignedCACert(cert.Config{
		CommonName: "liqo-testbed-" + cluster + "-ca",
		NotBefore:  time.Now().Add(-time.Hour),
	}, caKey)
	if err != nil {
		return nil, fmt.Errorf("making the testbed CA: %w", err)
	}
	p.caKey = caKey
	if p.caPEM, err = cert.EncodeCertificates(p.caCert); err != nil {
		return nil, err
	}
	if err := writePEM(p.caFile(), p.caPEM); err != nil {
		return nil, err
	}
	if err := writeKey(p.caKeyFile(), caKey); err != nil {
		return nil, err
	}

	serving := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		IPAddresses: append([]net.IP{net.IPv4(127, 0, 0, 1)}, serverIPs...),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if _, _, err := p.issue(serving, p.servingCert(), p.servingKey()); err != nil {
		return nil, err
	}
	kwokServing := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kwok"},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if _, _, err := p.issue(kwokServing, p.kwokServerCrt(), p.kwokServerKey()); err != nil {
		return nil, err
	}
	kubelet := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver-kubelet-client", Organization: []string{"kubeadm:cluster-admins"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if _, _, err := p.issue(kubelet, p.kubeletCert(), p.kubeletKey()); err != nil {
		return nil, err
	}
	if err := p.webhookClient(); err != nil {
		return nil, err
	}
	if err := p.frontProxy(cluster); err != nil {
		return nil, err
	}
	admin := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "kubernetes-admin", Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if p.adminCertPEM, p.adminKeyPEM, err = p.issue(admin, p.path("admin.crt"), p.path("admin.key")); err != nil {
		return nil, err
	}

	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	if err := writeKey(p.saKeyFile(), saKey); err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	return p, writePEM(p.saPubFile(), pemBlock("PUBLIC KEY", pub))
}

// webhookClient issues the API server's client certificate for admission
// webhooks and writes the AdmissionConfiguration that presents it to every
// webhook host ("*"). A webhook server asking for no client certificate
// never sees it.
func (p *pki) webhookClient() error {
	tmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: WebhookClientName},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	crt, key := p.path("webhook-client.crt"), p.path("webhook-client.key")
	if _, _, err := p.issue(tmpl, crt, key); err != nil {
		return err
	}
	kubeconfig := p.path("webhook-client.kubeconfig")
	users := fmt.Sprintf("apiVersion: v1\nkind: Config\nusers:\n- name: \"*\"\n  user:\n    client-certificate: %q\n    client-key: %q\n", crt, key)
	if err := os.WriteFile(kubeconfig, []byte(users), 0o600); err != nil {
		return err
	}
	plugin := func(name string) string {
		return fmt.Sprintf("- name: %s\n  configuration:\n    apiVersion: apiserver.config.k8s.io/v1\n    kind: WebhookAdmissionConfiguration\n    kubeConfigFile: %q\n", name, kubeconfig)
	}
	cfg := "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n" +
		plugin("ValidatingAdmissionWebhook") + plugin("MutatingAdmissionWebhook")
	return os.WriteFile(p.admissionConfig(), []byte(cfg), 0o600)
}

// issue signs tmpl with the CA and writes the certificate and a new key.
func (p *pki) issue(tmpl *x509.Certificate, certPath, keyPath string) (certPEM, keyPEM []byte, err error) {
	return p.issueBy(p.caCert, p.caKey, tmpl, certPath, keyPath)
}

// issueBy is issue with another CA.
func (p *pki) issueBy(ca *x509.Certificate, caKey crypto.Signer, tmpl *x509.Certificate, certPath, keyPath string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().AddDate(10, 0, 0)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := sign(tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, err
	}
	certPEM = pemBlock("CERTIFICATE", der)
	if err := writePEM(certPath, certPEM); err != nil {
		return nil, nil, err
	}
	if keyPEM, err = keyutil.MarshalPrivateKeyToPEM(key); err != nil {
		return nil, nil, err
	}
	return certPEM, keyPEM, writePEM(keyPath, keyPEM)
}

func sign(tmpl, parent *x509.Certificate, pub crypto.PublicKey, key crypto.Signer) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, key)
	if err != nil {
		return nil, fmt.Errorf("signing %q: %w", tmpl.Subject.CommonName, err)
	}
	return der, nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func writePEM(path string, data []byte) error { return os.WriteFile(path, data, 0o600) }

func writeKey(path string, key *ecdsa.PrivateKey) error {
	data, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return err
	}
	return writePEM(path, data)
}
