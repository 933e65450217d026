package identity

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/liqo-go/liqo/pkg/consts"
)

// handshakeContext opens every message the identity key signs. With the
// length-prefixed fields after it, it makes a signature by that key mean
// "consumer C answers provider P's challenge N for client key K" and
// nothing else: no TLS transcript, no other protocol's message and no
// handshake with another pair of clusters has the same bytes.
const handshakeContext = "liqo-go peering handshake v1\x00"

// ErrBadSignature means the signature was not made by the presented key
// over this handshake.
var ErrBadSignature = errors.New("the handshake signature does not match the consumer's public key")

// NewNonce returns a fresh random challenge.
func NewNonce() ([]byte, error) {
	n := make([]byte, consts.NonceSize)
	_, err := rand.Read(n)
	return n, err
}

// Handshake is what a consumer's signature vouches for. The provider fills
// it from its own knowledge: its own cluster ID, the consumer ID its tenant
// namespace is named after, the nonce it issued and the key of the
// certificate request it is about to have signed.
type Handshake struct {
	ConsumerID string
	ProviderID string
	Nonce      []byte
	// ClientKey is the PKIX (DER) public key of the consumer's certificate
	// request: signing it binds the certificate the provider issues to the
	// identity that answered the challenge.
	ClientKey []byte
}

// message is the signed byte string: the context, then each field with its
// length as a big-endian uint16, so no two handshakes share their bytes.
func (h *Handshake) message() ([]byte, error) {
	switch {
	case h.ConsumerID == "":
		return nil, errors.New("the handshake has no consumer cluster ID")
	case h.ProviderID == "":
		return nil, errors.New("the handshake has no provider cluster ID")
	case len(h.Nonce) != consts.NonceSize:
		return nil, fmt.Errorf("the nonce has %d bytes, expected %d", len(h.Nonce), consts.NonceSize)
	case len(h.ClientKey) == 0:
		return nil, errors.New("the handshake has no client key")
	}
	fields := [][]byte{[]byte(h.ConsumerID), []byte(h.ProviderID), h.Nonce, h.ClientKey}
	msg := []byte(handshakeContext)
	for _, f := range fields {
		if len(f) > 0xffff {
			return nil, fmt.Errorf("a handshake field has %d bytes, more than %d", len(f), 0xffff)
		}
		msg = binary.BigEndian.AppendUint16(msg, uint16(len(f)))
		msg = append(msg, f...)
	}
	return msg, nil
}

// SignHandshake answers a provider's challenge with the identity key. It is
// the only use of that key.
func (k *Keys) SignHandshake(h Handshake) ([]byte, error) {
	msg, err := h.message()
	if err != nil {
		return nil, err
	}
	return ed25519.Sign(k.signing, msg), nil
}

// VerifyHandshake checks, on the provider, a consumer's answer to a
// challenge.
func VerifyHandshake(publicKey []byte, h Handshake, signature []byte) error {
	if len(publicKey) != ed25519.PublicKeySize {
		return errors.New("the consumer's public key is not an Ed25519 key")
	}
	msg, err := h.message()
	if err != nil {
		return err
	}
	if !ed25519.Verify(ed25519.PublicKey(publicKey), msg, signature) {
		return ErrBadSignature
	}
	return nil
}
