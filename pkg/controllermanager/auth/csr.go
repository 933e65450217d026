package auth

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
)

// NewCSR returns a PEM certificate request for user in group, signed with
// key: the provider's API server will know the consumer by that user.
func NewCSR(key ed25519.PrivateKey, user, group string) ([]byte, error) {
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{CommonName: user, Organization: []string{group}},
	}, key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), nil
}

// CheckCSR verifies that a PEM request is self-signed by publicKey and asks
// for exactly user in group, so a consumer cannot obtain a certificate for
// somebody else or for a key it did not prove to own.
func CheckCSR(csrPEM, publicKey []byte, user, group string) error {
	block, _ := pem.Decode(csrPEM)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return errors.New("the CSR is not a PEM certificate request")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return fmt.Errorf("parsing the CSR: %w", err)
	}
	if err := req.CheckSignature(); err != nil {
		return fmt.Errorf("the CSR signature is invalid: %w", err)
	}
	pk, ok := req.PublicKey.(ed25519.PublicKey)
	if !ok || !bytes.Equal(pk, publicKey) {
		return errors.New("the CSR's key is not the cluster's public key")
	}
	if req.Subject.CommonName != user || !slices.Equal(req.Subject.Organization, []string{group}) {
		return fmt.Errorf("the CSR asks for %q in %v, expected %q in [%s]", req.Subject.CommonName, req.Subject.Organization, user, group)
	}
	return nil
}

// certMatches tells whether certPEM is a certificate for publicKey that is
// still valid for a while, so a Tenant that was already served needs no new
// one.
func certMatches(certPEM, publicKey []byte, now func() int64) bool {
	block, _ := pem.Decode(certPEM)
	if block == nil {
		return false
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return false
	}
	pk, ok := cert.PublicKey.(ed25519.PublicKey)
	if !ok || !bytes.Equal(pk, publicKey) {
		return false
	}
	// Renew when less than a tenth of the lifetime is left.
	life := cert.NotAfter.Unix() - cert.NotBefore.Unix()
	return cert.NotAfter.Unix()-now() > life/10
}
