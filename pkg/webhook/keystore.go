package webhook

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Keys of the Secret holding the in-cluster serving keys: the current
// certificate with its key and CA, and, during a renewal, the next ones.
// A Secret and not each replica's memory, because every replica behind the
// webhook Service must serve a certificate the one caBundle trusts.
const (
	secretCert     = "tls.crt"
	secretKey      = "tls.key"
	secretCA       = "ca.crt"
	secretNextCert = "next-tls.crt"
	secretNextKey  = "next-tls.key"
	secretNextCA   = "next-ca.crt"
	// publishedAnnotation records when a bundle with the next CA reached
	// the webhook configurations (RFC 3339).
	publishedAnnotation = "liqo.io/webhook-ca-published"
)

// encodePair writes p into data under the three keys.
func encodePair(data map[string][]byte, p *keyPair, certKey, keyKey, caKey string) error {
	der, err := x509.MarshalPKCS8PrivateKey(p.cert.PrivateKey)
	if err != nil {
		return fmt.Errorf("encoding the webhook serving key: %w", err)
	}
	data[certKey] = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.cert.Certificate[0]})
	data[keyKey] = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	data[caKey] = p.caPEM
	return nil
}

// decodePair reads a pair written by encodePair; nil if the keys are absent.
func decodePair(data map[string][]byte, certKey, keyKey, caKey string) (*keyPair, error) {
	if len(data[certKey]) == 0 {
		return nil, nil
	}
	cert, err := tls.X509KeyPair(data[certKey], data[keyKey])
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", certKey, keyKey, err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", certKey, err)
	}
	cert.Leaf = leaf
	if block, _ := pem.Decode(data[caKey]); block == nil {
		return nil, fmt.Errorf("%s holds no PEM certificate", caKey)
	}
	// servingCert backdates NotBefore by a minute.
	return &keyPair{cert: cert, caPEM: data[caKey], made: leaf.NotBefore.Add(time.Minute), expires: leaf.NotAfter}, nil
}

// toSecret writes the keys' state into s's data and annotation.
func (k *servingKeys) toSecret(s *corev1.Secret) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	s.Data = map[string][]byte{}
	if err := encodePair(s.Data, k.current, secretCert, secretKey, secretCA); err != nil {
		return err
	}
	if s.Annotations == nil {
		s.Annotations = map[string]string{}
	}
	delete(s.Annotations, publishedAnnotation)
	if k.next == nil {
		return nil
	}
	if err := encodePair(s.Data, k.next, secretNextCert, secretNextKey, secretNextCA); err != nil {
		return err
	}
	if !k.published.IsZero() {
		s.Annotations[publishedAnnotation] = k.published.UTC().Format(time.RFC3339Nano)
	}
	return nil
}

// keysFromSecret reads what toSecret wrote.
func keysFromSecret(s *corev1.Secret, names []string, lifetime time.Duration) (*servingKeys, error) {
	k := &servingKeys{names: names, lifetime: lifetime}
	var err error
	if k.current, err = decodePair(s.Data, secretCert, secretKey, secretCA); err != nil {
		return nil, err
	}
	if k.current == nil {
		return nil, errors.New("no serving certificate in it")
	}
	if k.next, err = decodePair(s.Data, secretNextCert, secretNextKey, secretNextCA); err != nil {
		return nil, err
	}
	if v := s.Annotations[publishedAnnotation]; v != "" && k.next != nil {
		if k.published, err = time.Parse(time.RFC3339Nano, v); err != nil {
			return nil, fmt.Errorf("annotation %s: %w", publishedAnnotation, err)
		}
	}
	return k, nil
}

// served replaces the certificate served with s's current one: for the
// replicas that do not renew, whose keys only follow the Secret.
func (k *servingKeys) follow(s *corev1.Secret) error {
	cur, err := decodePair(s.Data, secretCert, secretKey, secretCA)
	if err != nil {
		return err
	}
	if cur == nil {
		return errors.New("no serving certificate in it")
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.current = cur
	return nil
}

// ready tells whether there is a certificate to serve.
func (k *servingKeys) ready() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.current != nil
}
