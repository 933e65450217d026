package auth

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/identity"
)

// The consumer in the signer tests.
const consumerID = "rome"

func newSigner(t *testing.T) (*SignerReconciler, *record.FakeRecorder) {
	t.Helper()
	keys, err := identity.Generate()
	if err != nil {
		t.Fatal(err)
	}
	rec := record.NewFakeRecorder(10)
	return &SignerReconciler{Client: cl, Reader: cl, Keys: keys, ClusterID: consumerID, Recorder: rec}, rec
}

// tenantLabels are the labels liqoctl gives the tenant namespace of remote.
func tenantLabels(remote string) map[string]string {
	return map[string]string{consts.TenantNamespaceLabel: "true", consts.RemoteClusterIDLabel: remote, consts.ManagedByLabel: consts.ManagedByValue}
}

func createNamespace(ctx context.Context, t *testing.T, name string, labels map[string]string) {
	t.Helper()
	if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}); err != nil {
		t.Fatal(err)
	}
}

// toSign creates a Secret the way liqoctl creates the signed-nonce Secret,
// or as anyone may who can write Secrets in namespace.
func toSign(ctx context.Context, t *testing.T, namespace, name, remote string, nonce []byte) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace,
		Labels: map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.NonceSecretLabel: consts.NonceToSign, consts.RemoteClusterIDLabel: remote}},
		Data: map[string][]byte{consts.NonceKey: nonce}}
	if err := cl.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	return s
}

func mustNonce(t *testing.T) []byte {
	t.Helper()
	n, err := identity.NewNonce()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSignerRefusesHostileSecrets: a Secret with the signer's labels is a
// request for a signature by the cluster's identity. Outside the tenant
// namespace of a peering, or with a nonce that is not exactly
// consts.NonceSize bytes, it is refused with an Event saying why, and
// left untouched.
func TestSignerRefusesHostileSecrets(t *testing.T) {
	nonce := mustNonce(t)
	// What a TLS 1.3 client signs in CertificateVerify: 64 spaces, the
	// context string, a zero byte and the transcript hash.
	tlsContent := append([]byte(strings.Repeat(" ", 64)+"TLS 1.3, client CertificateVerify\x00"), make([]byte, 32)...)
	twin := tenantLabels("evil3")
	twin[consts.TwinNamespaceLabel] = "true"
	cases := []struct {
		name      string
		namespace string
		nsLabels  map[string]string
		secret    string
		remote    string
		nonce     []byte
		want      string
	}{
		{"outside tenant namespaces", "team-a", nil, consts.SignedNonceSecret, "milan", nonce,
			"namespace team-a is not a tenant namespace"},
		{"a tenant-named namespace without liqoctl's labels", "liqo-tenant-evil", nil, consts.SignedNonceSecret, "evil", nonce,
			"namespace liqo-tenant-evil is not labelled as the tenant namespace of evil"},
		{"a namespace labelled for another provider", "liqo-tenant-evil2", tenantLabels("naples"), consts.SignedNonceSecret, "evil2", nonce,
			"is not labelled as the tenant namespace of evil2"},
		{"a twin namespace", "liqo-tenant-evil3", twin, consts.SignedNonceSecret, "evil3", nonce,
			"namespace liqo-tenant-evil3 is a twin namespace"},
		{"the tenant namespace named after this cluster", consts.TenantNamespace(consumerID), tenantLabels(consumerID), consts.SignedNonceSecret, consumerID, nonce,
			"names this cluster itself"},
		{"another Secret in a tenant namespace", "liqo-tenant-milan1", tenantLabels("milan1"), "planted", "milan1", nonce,
			"only Secret liqo-signed-nonce is signed in a tenant namespace, not planted"},
		{"a Secret labelled for another provider", "liqo-tenant-milan2", tenantLabels("milan2"), consts.SignedNonceSecret, "naples", nonce,
			`label liqo.io/remote-cluster-id of the Secret is "naples"`},
		{"a short nonce", "liqo-tenant-milan3", tenantLabels("milan3"), consts.SignedNonceSecret, "milan3", nonce[:32],
			"field data.nonce has 32 bytes, a nonce has exactly 64"},
		{"a TLS CertificateVerify content as nonce", "liqo-tenant-milan4", tenantLabels("milan4"), consts.SignedNonceSecret, "milan4", tlsContent,
			"field data.nonce has 130 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			createNamespace(ctx, t, c.namespace, c.nsLabels)
			s := toSign(ctx, t, c.namespace, c.secret, c.remote, c.nonce)
			r, rec := newSigner(t)
			if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: s.Namespace, Name: s.Name}}); err != nil {
				t.Fatalf("a refusal is not an error to retry: %v", err)
			}
			var got corev1.Secret
			if err := cl.Get(ctx, types.NamespacedName{Namespace: s.Namespace, Name: s.Name}, &got); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{consts.SignatureKey, consts.PublicKeyKey, consts.CSRKey} {
				if _, ok := got.Data[k]; ok {
					t.Errorf("the refused Secret got field %s", k)
				}
			}
			if got.ResourceVersion != s.ResourceVersion {
				t.Error("the refused Secret was written to")
			}
			select {
			case e := <-rec.Events:
				if !strings.Contains(e, "Warning "+ReasonNonceNotSigned) || !strings.Contains(e, c.want) {
					t.Errorf("event %q, want a %s warning containing %q", e, ReasonNonceNotSigned, c.want)
				}
			default:
				t.Errorf("no event; want a %s warning containing %q", ReasonNonceNotSigned, c.want)
			}
		})
	}
}

// TestSignerAnswersTenantNonce: the nonce liqoctl copies into the tenant
// namespace of a provider is signed inside the handshake of this consumer
// and that provider, never as raw bytes, and the certificate request is for
// the TLS client key, not the identity: a signature from the signer can
// neither stand for another peering nor for a TLS handshake.
func TestSignerAnswersTenantNonce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const provider = "milan"
	createNamespace(ctx, t, consts.TenantNamespace(provider), tenantLabels(provider))
	nonce := mustNonce(t)
	s := toSign(ctx, t, consts.TenantNamespace(provider), consts.SignedNonceSecret, provider, nonce)
	r, rec := newSigner(t)
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: s.Namespace, Name: s.Name}}
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	var got corev1.Secret
	if err := cl.Get(ctx, req.NamespacedName, &got); err != nil {
		t.Fatal(err)
	}
	pub, sig := got.Data[consts.PublicKeyKey], got.Data[consts.SignatureKey]
	if !ed25519.PublicKey(pub).Equal(r.Keys.Public) {
		t.Fatal("the Secret does not carry the identity's public key")
	}
	csrKey, err := CheckCSR(got.Data[consts.CSRKey], pub, consts.ConsumerUser(consumerID), consts.ConsumerGroup)
	if err != nil {
		t.Fatalf("the certificate request: %v", err)
	}
	if clientKey, _ := r.Keys.ClientPublicKey(); string(csrKey) != string(clientKey) {
		t.Fatal("the certificate request is not for the TLS client key")
	}
	if k, err := x509.ParsePKIXPublicKey(csrKey); err != nil || k.(ed25519.PublicKey).Equal(r.Keys.Public) {
		t.Fatalf("the certificate request is for the identity key (%v)", err)
	}
	h := identity.Handshake{ConsumerID: consumerID, ProviderID: provider, Nonce: nonce, ClientKey: csrKey}
	if err := identity.VerifyHandshake(pub, h, sig); err != nil {
		t.Fatalf("the signature does not answer the handshake: %v", err)
	}
	if ed25519.Verify(pub, nonce, sig) {
		t.Fatal("the signature is over the raw nonce")
	}
	h.ProviderID = "naples"
	if err := identity.VerifyHandshake(pub, h, sig); !errors.Is(err, identity.ErrBadSignature) {
		t.Fatalf("the signature also verifies for another provider: %v", err)
	}
	// Signed once: a second pass leaves the Secret alone.
	if _, err := r.Reconcile(ctx, req); err != nil {
		t.Fatal(err)
	}
	var again corev1.Secret
	if err := cl.Get(ctx, req.NamespacedName, &again); err != nil || again.ResourceVersion != got.ResourceVersion {
		t.Fatalf("a signed Secret was written again (%v)", err)
	}
	select {
	case e := <-rec.Events:
		t.Fatalf("unexpected event %q", e)
	default:
	}
}
