package testbed

import (
	"github.com/liqo-go/liqo/test/harness"

	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509/pkix"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/utils/ptr"
)

// TestCSRSigning: a CSR approved with the admin client is signed by the
// controller manager, and the certificate authenticates as its subject.
func TestCSRSigning(t *testing.T) {
	for _, c := range shared.Clusters {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cs := c.Client()

			key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			request, err := cert.MakeCSR(key, &pkix.Name{CommonName: "peer-user", Organization: []string{"peers"}}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			csr := &certificatesv1.CertificateSigningRequest{
				ObjectMeta: metav1.ObjectMeta{GenerateName: "peer-"},
				Spec: certificatesv1.CertificateSigningRequestSpec{
					Request:    request,
					SignerName: certificatesv1.KubeAPIServerClientSignerName,
					Usages:     []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth, certificatesv1.UsageDigitalSignature},
				},
			}
			csr, err = cs.CertificatesV1().CertificateSigningRequests().Create(ctx, csr, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			csr.Status.Conditions = append(csr.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
				Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue,
				Reason: "TestApproval", Message: "approved by the testbed test",
			})
			if _, err := cs.CertificatesV1().CertificateSigningRequests().UpdateApproval(ctx, csr.Name, csr, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			var signed []byte
			harness.Eventually(ctx, t, "the signed certificate", func() (bool, error) {
				got, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, csr.Name, metav1.GetOptions{})
				if err != nil {
					return false, err
				}
				signed = got.Status.Certificate
				return len(signed) > 0, nil
			})

			keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
			if err != nil {
				t.Fatal(err)
			}
			cfg := rest.AnonymousClientConfig(c.Config)
			cfg.CertData = signed
			cfg.KeyData = keyPEM
			user := whoAmI(ctx, t, cfg)
			if user.Username != "peer-user" {
				t.Errorf("the signed certificate authenticates as %q, want peer-user", user.Username)
			}
		})
	}
}

// TestServiceAccountToken: a token requested through the TokenRequest API
// authenticates as its ServiceAccount.
func TestServiceAccountToken(t *testing.T) {
	for _, c := range shared.Clusters {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cs := c.Client()
			ns := createNamespace(ctx, t, cs, "token")
			sa, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{
				ObjectMeta: metav1.ObjectMeta{Name: "robot"},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{
				Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cfg := rest.AnonymousClientConfig(c.Config)
			cfg.BearerToken = tr.Status.Token
			user := whoAmI(ctx, t, cfg)
			if want := "system:serviceaccount:" + ns + ":robot"; user.Username != want {
				t.Errorf("the token authenticates as %q, want %q", user.Username, want)
			}
		})
	}
}

func whoAmI(ctx context.Context, t *testing.T, cfg *rest.Config) authenticationv1.UserInfo {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("authenticating: %v", err)
	}
	return review.Status.UserInfo
}
