package auth

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"time"

	"k8s.io/client-go/util/cert"
)

// NewCSR returns a PEM certificate request for user in group, signed with
// key: the provider's API server will know the consumer by that user. key is
// the cluster's TLS client key, never its identity key.
func NewCSR(key ed25519.PrivateKey, user, group string) ([]byte, error) {
	return cert.MakeCSR(key, &pkix.Name{CommonName: user, Organization: []string{group}}, nil, nil)
}

// CheckCSR verifies that a PEM request is self-signed, asks for exactly user
// in group, and is not for the consumer's identity key identityKey. It
// returns the request's public key (PKIX DER), which the consumer's
// handshake signature must cover: so a consumer cannot obtain a certificate
// for somebody else or for a key its identity did not vouch for, and its
// identity key never becomes a TLS key.
func CheckCSR(csrPEM, identityKey []byte, user, group string) ([]byte, error) {
	block, _ := pem.Decode(csrPEM)
	if block == nil || block.Type != "CERTIFICATE REQUEST" {
		return nil, errors.New("the CSR is not a PEM certificate request")
	}
	req, err := x509.ParseCertificateRequest(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parsing the CSR: %w", err)
	}
	if err := req.CheckSignature(); err != nil {
		return nil, fmt.Errorf("the CSR signature is invalid: %w", err)
	}
	if pk, ok := req.PublicKey.(ed25519.PublicKey); ok && bytes.Equal(pk, identityKey) {
		return nil, errors.New("the CSR's key is the consumer's identity key: the TLS client key must be a separate key")
	}
	if req.Subject.CommonName != user || !slices.Equal(req.Subject.Organization, []string{group}) {
		return nil, fmt.Errorf("the CSR asks for %q in %v, expected %q in [%s]", req.Subject.CommonName, req.Subject.Organization, user, group)
	}
	der, err := x509.MarshalPKIXPublicKey(req.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("the CSR's public key: %w", err)
	}
	return der, nil
}

// certMatches tells whether certPEM is a certificate for the public key
// clientKey (PKIX DER) that needs no renewal yet at now, so a Tenant that
// was already served needs no new one.
func certMatches(certPEM, clientKey []byte, now time.Time) bool {
	cert, ok := certFor(certPEM, clientKey)
	return ok && now.Before(renewAt(cert))
}

func parseCert(certPEM []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("not a PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}
