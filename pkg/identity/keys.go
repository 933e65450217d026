package identity

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// SecretName is the Secret, in the liqo namespace, holding the identity key
// pair. Its private key is read by the controller manager only and is never
// written anywhere else.
const SecretName = "liqo-cluster-identity"

// ClientKeySecretName is the Secret, in the liqo namespace, holding the key
// pair of the TLS client certificates providers issue to this cluster. Its
// private key is also written into the kubeconfig Secrets built from
// Identities, in the tenant namespaces of this cluster.
const ClientKeySecretName = "liqo-cluster-client-key"

// Keys of both Secrets' data.
const (
	privateKeyField = "privateKey"
	publicKeyField  = "publicKey"
)

// Keys are a cluster's two Ed25519 key pairs. They are distinct so that a
// signature made by the identity can never serve as a TLS handshake
// signature, and so that the key copied into kubeconfigs is not the one
// providers know the cluster by.
type Keys struct {
	// Public is the identity's public key: providers know this cluster by it.
	Public ed25519.PublicKey
	// signing is the identity's private key. It is unexported so that no
	// other package can copy it into a kubeconfig or sign with it anything
	// but a peering handshake (SignHandshake).
	signing ed25519.PrivateKey
	// Client is the private key of this cluster's TLS client certificates
	// on its providers.
	Client ed25519.PrivateKey
}

// Generate returns fresh Keys held in memory only (Ensure stores them).
func Generate() (*Keys, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	_, client, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	return &Keys{Public: pub, signing: priv, Client: client}, nil
}

// ClientPublicKey returns the public half of the TLS client key in PKIX DER,
// the form a certificate request carries and a handshake signature covers.
func (k *Keys) ClientPublicKey() ([]byte, error) {
	return x509.MarshalPKIXPublicKey(k.Client.Public())
}

// Ensure returns the cluster's key pairs, creating each on first use.
// Concurrent callers (two controller-manager replicas starting at once) all
// end up with the pairs that were stored first: creation races are settled
// by the API server's AlreadyExists.
func Ensure(ctx context.Context, cs kubernetes.Interface, namespace string) (*Keys, error) {
	secrets := cs.CoreV1().Secrets(namespace)
	signing, err := ensurePair(ctx, secrets, namespace, SecretName)
	if err != nil {
		return nil, fmt.Errorf("the cluster identity: %w", err)
	}
	client, err := ensurePair(ctx, secrets, namespace, ClientKeySecretName)
	if err != nil {
		return nil, fmt.Errorf("the cluster's TLS client key: %w", err)
	}
	if bytes.Equal(signing, client) {
		return nil, fmt.Errorf("secrets %s/%s and %s/%s hold the same key: the TLS client key must differ from the identity; delete %s to create a new client key",
			namespace, SecretName, namespace, ClientKeySecretName, ClientKeySecretName)
	}
	return &Keys{Public: signing.Public().(ed25519.PublicKey), signing: signing, Client: client}, nil
}

func ensurePair(ctx context.Context, secrets typedcorev1.SecretInterface, namespace, name string) (ed25519.PrivateKey, error) {
	for range 3 {
		s, err := secrets.Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			return fromSecret(s)
		}
		if !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("reading %s/%s: %w", namespace, name, err)
		}
		pub, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
		s = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
			Data:       map[string][]byte{privateKeyField: priv, publicKeyField: pub},
		}
		if _, err := secrets.Create(ctx, s, metav1.CreateOptions{}); err == nil {
			return priv, nil
		} else if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("storing %s/%s: %w", namespace, name, err)
		}
		// Someone else stored theirs first: read it back.
	}
	return nil, fmt.Errorf("%s/%s keeps appearing and disappearing", namespace, name)
}

func fromSecret(s *corev1.Secret) (ed25519.PrivateKey, error) {
	priv, pub := s.Data[privateKeyField], s.Data[publicKeyField]
	if len(priv) != ed25519.PrivateKeySize || len(pub) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("secret %s/%s does not hold an Ed25519 key pair (fields %q and %q); delete it to create a new one",
			s.Namespace, s.Name, privateKeyField, publicKeyField)
	}
	k := ed25519.PrivateKey(priv)
	if !k.Public().(ed25519.PublicKey).Equal(ed25519.PublicKey(pub)) {
		return nil, fmt.Errorf("secret %s/%s holds a public key that does not match its private key", s.Namespace, s.Name)
	}
	return k, nil
}
