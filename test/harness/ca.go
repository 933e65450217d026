package harness

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"testing"

	"k8s.io/client-go/util/cert"
)

// SelfSignedCA is a new self-signed CA certificate (PEM) named name,
// related to no server: a CA a check against a real server must refuse.
func SelfSignedCA(t testing.TB, name string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := cert.NewSelfSignedCACert(cert.Config{CommonName: name}, key)
	if err != nil {
		t.Fatal(err)
	}
	b, err := cert.EncodeCertificates(ca)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
