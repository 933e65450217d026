package identity

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
)

// NonceSize is the length of the provider's challenge.
const NonceSize = 64

// ErrBadSignature means the signature was not made by the presented key.
var ErrBadSignature = errors.New("the nonce signature does not match the consumer's public key")

// NewNonce returns a fresh random challenge.
func NewNonce() ([]byte, error) {
	n := make([]byte, NonceSize)
	_, err := rand.Read(n)
	return n, err
}

// Sign answers a provider's challenge with the consumer's private key.
func (k *Keys) Sign(nonce []byte) []byte { return ed25519.Sign(k.Private, nonce) }

// Verify checks, on the provider, a consumer's answer to a challenge.
func Verify(publicKey, nonce, signature []byte) error {
	if len(publicKey) != ed25519.PublicKeySize {
		return errors.New("the consumer's public key is not an Ed25519 key")
	}
	if len(nonce) != NonceSize {
		return errors.New("the nonce has the wrong length")
	}
	if !ed25519.Verify(ed25519.PublicKey(publicKey), nonce, signature) {
		return ErrBadSignature
	}
	return nil
}
