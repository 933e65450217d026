package identity

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// SecretName is the Secret, in the liqo namespace, holding the key pair.
const SecretName = "liqo-cluster-identity"

// Keys of the Secret's data.
const (
	privateKeyField = "privateKey"
	publicKeyField  = "publicKey"
)

// Keys is a cluster's Ed25519 key pair.
type Keys struct {
	Private ed25519.PrivateKey
	Public  ed25519.PublicKey
}

// Ensure returns the cluster's key pair, creating it on first use. Concurrent
// callers (two controller-manager replicas starting at once) all end up with
// the pair that was stored first: creation races are settled by the API
// server's AlreadyExists.
func Ensure(ctx context.Context, cs kubernetes.Interface, namespace string) (*Keys, error) {
	secrets := cs.CoreV1().Secrets(namespace)
	for range 3 {
		s, err := secrets.Get(ctx, SecretName, metav1.GetOptions{})
		if err == nil {
			return fromSecret(s)
		}
		if !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("reading the cluster identity %s/%s: %w", namespace, SecretName, err)
		}
		pub, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, err
		}
		s = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: SecretName, Namespace: namespace},
			Data:       map[string][]byte{privateKeyField: priv, publicKeyField: pub},
		}
		if _, err := secrets.Create(ctx, s, metav1.CreateOptions{}); err == nil {
			return &Keys{Private: priv, Public: pub}, nil
		} else if !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("storing the cluster identity %s/%s: %w", namespace, SecretName, err)
		}
		// Someone else stored theirs first: read it back.
	}
	return nil, fmt.Errorf("the cluster identity %s/%s keeps appearing and disappearing", namespace, SecretName)
}

func fromSecret(s *corev1.Secret) (*Keys, error) {
	priv, pub := s.Data[privateKeyField], s.Data[publicKeyField]
	if len(priv) != ed25519.PrivateKeySize || len(pub) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("secret %s/%s does not hold an Ed25519 key pair (fields %q and %q); delete it to create a new identity",
			s.Namespace, s.Name, privateKeyField, publicKeyField)
	}
	k := &Keys{Private: ed25519.PrivateKey(priv), Public: ed25519.PublicKey(pub)}
	if !k.Private.Public().(ed25519.PublicKey).Equal(k.Public) {
		return nil, fmt.Errorf("secret %s/%s holds a public key that does not match its private key", s.Namespace, s.Name)
	}
	return k, nil
}
