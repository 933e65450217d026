package gateway

import (
	"crypto/ecdh"
	"crypto/rand"
	"fmt"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
)

// NewKeyPair returns a fresh WireGuard key pair. X25519 from the standard
// library is WireGuard's key agreement: its 32-byte private keys (clamped
// by the curve's own rules) and public keys are WireGuard keys as they are.
func NewKeyPair() (private, public []byte, err error) {
	k, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating the gateway key: %w", err)
	}
	return k.Bytes(), k.PublicKey().Bytes(), nil
}

// CheckKeyPair tells whether a Secret's keys are a usable pair: both 32
// bytes, the public one derived from the private one. A Secret edited by
// hand into something else would otherwise bring up a tunnel nobody can
// reach.
func CheckKeyPair(private, public []byte) error {
	if len(private) != netv1beta1.PublicKeyLength || len(public) != netv1beta1.PublicKeyLength {
		return fmt.Errorf("the keys are %d and %d bytes long, not %d", len(private), len(public), netv1beta1.PublicKeyLength)
	}
	k, err := ecdh.X25519().NewPrivateKey(private)
	if err != nil {
		return fmt.Errorf("invalid private key: %w", err)
	}
	if string(k.PublicKey().Bytes()) != string(public) {
		return fmt.Errorf("the public key does not match the private key")
	}
	return nil
}
