package kubeletapi

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"sync/atomic"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/certificate/csr"
)

// selfSignedValidity is the lifetime of a self-signed certificate; it is
// renewed, like an issued one, at renewAt of it.
const selfSignedValidity = 365 * 24 * time.Hour

// renewAt is the share of a certificate's lifetime after which it is
// renewed, as the kubelet's certificate manager does (70–90 %).
const renewAt = 0.8

// issueTimeout bounds one certificate request: a signer that does not
// answer in time is asked again.
const issueTimeout = 2 * time.Minute

// certHolder serves the current certificate to TLS handshakes while it is
// renewed in the background.
type certHolder struct {
	cert atomic.Pointer[tls.Certificate]
}

func (h *certHolder) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if c := h.cert.Load(); c != nil {
		return c, nil
	}
	return nil, errors.New("the kubelet API has no serving certificate yet")
}

// issuer obtains serving certificates for one IP address.
type issuer struct {
	mode       CertificateMode
	client     kubernetes.Interface
	ip         net.IP
	commonName string
}

// issue returns a new certificate with a new key, and when to renew it.
func (i *issuer) issue(ctx context.Context) (*tls.Certificate, time.Time, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, time.Time{}, err
	}
	var der []byte
	if i.mode == CertificateSelfSigned {
		der, err = i.selfSigned(key)
	} else {
		der, err = i.kubeletServing(ctx, key)
	}
	if err != nil {
		return nil, time.Time{}, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("parsing the issued certificate: %w", err)
	}
	renew := leaf.NotBefore.Add(time.Duration(renewAt * float64(leaf.NotAfter.Sub(leaf.NotBefore))))
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, renew, nil
}

func (i *issuer) subject() pkix.Name {
	return pkix.Name{CommonName: "system:node:" + i.commonName, Organization: []string{"system:nodes"}}
}

func (i *issuer) selfSigned(key *ecdsa.PrivateKey) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      i.subject(),
		IPAddresses:  []net.IP{i.ip},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(selfSignedValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	return x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
}

// kubeletServing has the kubelet-serving signer issue the certificate. The
// CSR is approved here: the cluster approves kubelet client certificates
// by itself, never serving ones, and no kubelet stands behind this one.
func (i *issuer) kubeletServing(ctx context.Context, key *ecdsa.PrivateKey) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, issueTimeout)
	defer cancel()
	subject := i.subject()
	csrPEM, err := cert.MakeCSR(key, &subject, nil, []net.IP{i.ip})
	if err != nil {
		return nil, err
	}
	name := "liqo-kubelet-api-" + utilrand.String(8)
	usages := []certv1.KeyUsage{certv1.UsageDigitalSignature, certv1.UsageServerAuth}
	name, uid, err := csr.RequestCertificateWithContext(ctx, i.client, csrPEM, name, certv1.KubeletServingSignerName, nil, usages, key)
	if err != nil {
		return nil, fmt.Errorf("requesting a kubelet serving certificate: %w", err)
	}
	csrs := i.client.CertificatesV1().CertificateSigningRequests()
	obj, err := csrs.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading certificate request %s: %w", name, err)
	}
	obj.Status.Conditions = append(obj.Status.Conditions, certv1.CertificateSigningRequestCondition{
		Type: certv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "LiqoKubeletAPI",
		Message: "serving certificate of the virtual nodes' kubelet API, approved by the liqo controller manager",
	})
	if _, err := csrs.UpdateApproval(ctx, name, obj, metav1.UpdateOptions{}); err != nil {
		return nil, fmt.Errorf("approving certificate request %s: %w", name, err)
	}
	certPEM, err := csr.WaitForCertificate(ctx, i.client, name, uid)
	if err != nil {
		return nil, fmt.Errorf("waiting for certificate request %s to be signed (does kube-controller-manager sign %s?): %w",
			name, certv1.KubeletServingSignerName, err)
	}
	// Served from memory: the request has done its job, and one left per
	// renewal would outlive an uninstall (the cluster cleans issued ones
	// only after an hour). Failing to delete it loses nothing.
	_ = csrs.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	block, _ := pem.Decode(certPEM)
	if block == nil {
		return nil, fmt.Errorf("certificate request %s: the issued certificate is not PEM", name)
	}
	return block.Bytes, nil
}
