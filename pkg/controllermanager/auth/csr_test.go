package auth

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/remotecluster"
)

func TestCheckCSR(t *testing.T) {
	identityPub, identityKey, _ := ed25519.GenerateKey(rand.Reader)
	clientPub, clientKey, _ := ed25519.GenerateKey(rand.Reader)
	good, err := NewCSR(clientKey, "liqo-consumer-rome", "liqo.io:consumers")
	if err != nil {
		t.Fatal(err)
	}
	wrongUser, _ := NewCSR(clientKey, "system:admin", "liqo.io:consumers")
	wrongGroup, _ := NewCSR(clientKey, "liqo-consumer-rome", "system:masters")
	identityCSR, _ := NewCSR(identityKey, "liqo-consumer-rome", "liqo.io:consumers")
	cases := []struct {
		name    string
		csr     []byte
		wantErr string
	}{
		{"valid", good, ""},
		{"another user", wrongUser, `asks for "system:admin"`},
		{"another group", wrongGroup, "system:masters"},
		{"the identity key as TLS key", identityCSR, "the CSR's key is the consumer's identity key"},
		{"not PEM", []byte("garbage"), "not a PEM certificate request"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key, err := CheckCSR(c.csr, identityPub, "liqo-consumer-rome", "liqo.io:consumers")
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("got %v, want error containing %q", err, c.wantErr)
			}
			if c.wantErr == "" {
				want, _ := x509.MarshalPKIXPublicKey(clientPub)
				if string(key) != string(want) {
					t.Fatal("CheckCSR did not return the request's key")
				}
			}
		})
	}
}

func TestBuildKubeconfig(t *testing.T) {
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	_, otherKey, _ := ed25519.GenerateKey(rand.Reader)
	crt := selfSigned(t, key)
	if _, err := BuildKubeconfig(&authv1beta1.AuthParams{}, key, "u"); err == nil {
		t.Fatal("empty auth params accepted")
	}
	// A certificate for another key (the identity, before the keys were
	// split) is refused with a way out, rather than failing in TLS.
	_, err := BuildKubeconfig(&authv1beta1.AuthParams{APIServer: "https://127.0.0.1:6443", SignedCRT: crt}, otherKey, "u")
	if err == nil || !strings.Contains(err.Error(), "not for this cluster's TLS client key") {
		t.Fatalf("a certificate for another key: got %v", err)
	}
	if _, err := BuildKubeconfig(&authv1beta1.AuthParams{APIServer: "https://127.0.0.1:6443", SignedCRT: []byte("crt")}, key, "u"); err == nil ||
		!strings.Contains(err.Error(), "signedCrt") {
		t.Fatalf("a certificate that is not PEM: got %v", err)
	}
	kc, err := BuildKubeconfig(&authv1beta1.AuthParams{APIServer: "https://127.0.0.1:6443", CA: []byte("ca"), SignedCRT: crt}, key, "u")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := remotecluster.RESTConfig(kc)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://127.0.0.1:6443" || string(cfg.CAData) != "ca" || string(cfg.CertData) != string(crt) || !strings.Contains(string(cfg.KeyData), "PRIVATE KEY") ||
		cfg.ServerName != "" {
		t.Fatalf("unexpected config: host %s ca %q cert %q server name %q", cfg.Host, cfg.CAData, cfg.CertData, cfg.ServerName)
	}
	// In band: an address of the network fabric, the certificate checked
	// against the name it carries.
	kc, err = BuildKubeconfig(&authv1beta1.AuthParams{APIServer: "https://10.80.0.1:443", TLSServerName: "kubernetes.default.svc", CA: []byte("ca"), SignedCRT: crt}, key, "u")
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err = remotecluster.RESTConfig(kc); err != nil || cfg.Host != "https://10.80.0.1:443" || cfg.ServerName != "kubernetes.default.svc" {
		t.Fatalf("in-band config: %v, host %s, server name %q", err, cfg.Host, cfg.ServerName)
	}
	// Through a proxy: the REST config's transport uses it for every request.
	kc, err = BuildKubeconfig(&authv1beta1.AuthParams{APIServer: "https://127.0.0.1:6443", CA: []byte("ca"), SignedCRT: crt, ProxyURL: ptr.To("http://127.0.0.1:3128")}, key, "u")
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err = remotecluster.RESTConfig(kc); err != nil || cfg.Proxy == nil {
		t.Fatalf("proxied config: %v, no proxy", err)
	}
	req, _ := http.NewRequest(http.MethodGet, "https://127.0.0.1:6443/api", nil)
	if u, err := cfg.Proxy(req); err != nil || u == nil || u.String() != "http://127.0.0.1:3128" {
		t.Errorf("proxied config sends a request to %v (%v), want http://127.0.0.1:3128", u, err)
	}
	// A proxy client-go cannot use, from a manifest applied by hand, is
	// refused where it is used, naming the field.
	if _, err := BuildKubeconfig(&authv1beta1.AuthParams{APIServer: "https://127.0.0.1:6443", SignedCRT: crt, ProxyURL: ptr.To("ftp://x")}, key, "u"); err == nil ||
		!strings.Contains(err.Error(), "proxyURL") {
		t.Errorf("a bad proxyURL: %v", err)
	}
}

func selfSigned(t *testing.T, key ed25519.PrivateKey) []byte {
	t.Helper()
	return certValid(t, key, 1, time.Now(), time.Now().Add(time.Hour))
}

// certValid is a self-signed certificate of key valid from notBefore to
// notAfter.
func certValid(t *testing.T, key ed25519.PrivateKey, serial int64, notBefore, notAfter time.Time) []byte {
	t.Helper()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "u"}, NotBefore: notBefore, NotAfter: notAfter}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// TestRenewalOf: the consumer takes from its provider's Tenant only a
// certificate that renews its own: for its client key, another one, living
// at least as long, not expired. What a hostile or confused provider sends
// instead is refused.
func TestRenewalOf(t *testing.T) {
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	clientKey, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	curPEM := certValid(t, key, 1, now.Add(-time.Hour), now.Add(2*time.Hour))
	cur, ok := certFor(curPEM, clientKey)
	if !ok {
		t.Fatal("the current certificate is not for the client key")
	}
	for _, tc := range []struct {
		name string
		pem  []byte
		want bool
	}{
		{"a renewal", certValid(t, key, 2, now, now.Add(3*time.Hour)), true},
		{"the same certificate", curPEM, false},
		{"another key's", certValid(t, other, 3, now, now.Add(3*time.Hour)), false},
		{"one expiring earlier", certValid(t, key, 4, now, now.Add(time.Hour)), false},
		{"one already expired", certValid(t, key, 5, now.Add(-3*time.Hour), now.Add(-time.Minute)), false},
		{"not a certificate", []byte("garbage"), false},
	} {
		if _, got := renewalOf(cur, tc.pem, clientKey, now); got != tc.want {
			t.Errorf("%s: taken %v, want %v", tc.name, got, tc.want)
		}
	}
}
