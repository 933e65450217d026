package auth

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/identity"
	"github.com/liqo-go/liqo/pkg/remotecluster"
	"github.com/liqo-go/liqo/pkg/twinname"
	"github.com/liqo-go/liqo/test/harness"
)

// The provider in the Tenant tests.
const providerID = "milan"

func newTenantReconciler(provider string) *TenantReconciler {
	return &TenantReconciler{Client: cl, Clientset: cs, ClusterID: provider, CA: cluster.Config.CAData,
		APIServerURL: cluster.Config.Host, ClusterRole: "liqo-remote-controlplane", ReservedNamespaces: twinname.DefaultReserved()}
}

// issueNonce sets up, on the provider, consumer's tenant namespace and the
// nonce its NonceReconciler issues there, and returns the nonce.
func issueNonce(ctx context.Context, t *testing.T, consumer string) []byte {
	t.Helper()
	ns := consts.TenantNamespace(consumer)
	createNamespace(ctx, t, ns, tenantLabels(consumer))
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: consts.NonceSecret, Namespace: ns,
		Labels: map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.NonceSecretLabel: consts.NonceIssued}}}
	if err := cl.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: ns, Name: consts.NonceSecret}
	if _, err := (&NonceReconciler{Client: cl}).Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
		t.Fatal(err)
	}
	if err := cl.Get(ctx, key, s); err != nil {
		t.Fatal(err)
	}
	return s.Data[consts.NonceKey]
}

func createTenant(ctx context.Context, t *testing.T, consumer string, publicKey, csr, signature []byte) types.NamespacedName {
	t.Helper()
	tn := &authv1beta1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: consumer, Namespace: consts.TenantNamespace(consumer)},
		Spec: authv1beta1.TenantSpec{ClusterID: corev1beta1.ClusterID(consumer), AuthzPolicy: authv1beta1.KeysExchangePolicy,
			PublicKey: publicKey, CSR: csr, Signature: signature}}
	if err := cl.Create(ctx, tn); err != nil {
		t.Fatal(err)
	}
	return types.NamespacedName{Namespace: tn.Namespace, Name: tn.Name}
}

// material is what liqoctl copies from the consumer into its Tenant.
type material struct {
	pub, csr, sig []byte
}

// TestTenantRefusesForeignSignatures: the provider rebuilds the handshake
// from what it knows (its own ID, the consumer the namespace belongs to,
// the nonce it issued, the key in the CSR) and accepts no signature made
// for anything else: not the old raw-nonce scheme, not another provider,
// consumer or nonce, not a CSR whose key the signature does not cover, and
// no CSR for the identity key itself. No certificate is requested.
func TestTenantRefusesForeignSignatures(t *testing.T) {
	cases := []struct {
		name     string
		consumer string
		forge    func(t *testing.T, consumer string, nonce []byte) material
		want     string
	}{
		{"old consumer: raw nonce signed by the key of its CSR", "old", func(t *testing.T, consumer string, nonce []byte) material {
			pub, priv, _ := ed25519.GenerateKey(rand.Reader)
			csr, _ := NewCSR(priv, consts.ConsumerUser(consumer), consts.ConsumerGroup)
			return material{pub, csr, ed25519.Sign(priv, nonce)}
		}, "spec.csr: the CSR's key is the consumer's identity key"},
		{"raw nonce signature", "raw", func(t *testing.T, consumer string, nonce []byte) material {
			pub, priv, _ := ed25519.GenerateKey(rand.Reader)
			_, client, _ := ed25519.GenerateKey(rand.Reader)
			csr, _ := NewCSR(client, consts.ConsumerUser(consumer), consts.ConsumerGroup)
			return material{pub, csr, ed25519.Sign(priv, nonce)}
		}, "spec.signature does not verify"},
		{"signed for another provider", "other-provider", func(t *testing.T, consumer string, nonce []byte) material {
			return handshake(t, consumer, identity.Handshake{ConsumerID: consumer, ProviderID: "naples", Nonce: nonce})
		}, "spec.signature does not verify"},
		{"signed as another consumer", "other-consumer", func(t *testing.T, consumer string, nonce []byte) material {
			return handshake(t, consumer, identity.Handshake{ConsumerID: "turin", ProviderID: providerID, Nonce: nonce})
		}, "spec.signature does not verify"},
		{"signed another nonce", "other-nonce", func(t *testing.T, consumer string, nonce []byte) material {
			return handshake(t, consumer, identity.Handshake{ConsumerID: consumer, ProviderID: providerID, Nonce: mustNonce(t)})
		}, "spec.signature does not verify"},
		{"a CSR for a key the signature does not cover", "swapped-csr", func(t *testing.T, consumer string, nonce []byte) material {
			m := handshake(t, consumer, identity.Handshake{ConsumerID: consumer, ProviderID: providerID, Nonce: nonce})
			_, attacker, _ := ed25519.GenerateKey(rand.Reader)
			m.csr, _ = NewCSR(attacker, consts.ConsumerUser(consumer), consts.ConsumerGroup)
			return m
		}, "spec.signature does not verify"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			nonce := issueNonce(ctx, t, c.consumer)
			m := c.forge(t, c.consumer, nonce)
			key := createTenant(ctx, t, c.consumer, m.pub, m.csr, m.sig)
			if _, err := newTenantReconciler(providerID).Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
				t.Fatal(err)
			}
			var tn authv1beta1.Tenant
			if err := cl.Get(ctx, key, &tn); err != nil {
				t.Fatal(err)
			}
			cond := meta.FindStatusCondition(tn.Status.Conditions, authv1beta1.ReadyCondition)
			if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != "AuthenticationFailed" || !strings.Contains(cond.Message, c.want) {
				t.Fatalf("condition %+v, want AuthenticationFailed containing %q", cond, c.want)
			}
			if tn.Status.AuthParams != nil {
				t.Fatal("credentials were issued")
			}
			if _, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, csrName(c.consumer), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Fatalf("a certificate was requested (%v)", err)
			}
		})
	}
}

// TestTenantRefusesSquattingClusterIDs: consumers whose genuine handshake
// carries a cluster ID whose DefaultName twins "<namespace>-<id>" would be
// well-known namespaces (system: kube-system and every *-system; nginx:
// ingress-nginx, of the provider's reserved list) are refused with the
// reason in the Tenant's Ready condition and a Warning Event, before any
// certificate is requested or right granted.
func TestTenantRefusesSquattingClusterIDs(t *testing.T) {
	for id, names := range map[string]string{"system": "kube-system", "nginx": "ingress-nginx"} {
		t.Run(id, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			nonce := issueNonce(ctx, t, id)
			m := handshake(t, id, identity.Handshake{ConsumerID: id, ProviderID: providerID, Nonce: nonce})
			key := createTenant(ctx, t, id, m.pub, m.csr, m.sig)
			r := newTenantReconciler(providerID)
			events := record.NewFakeRecorder(10)
			r.Recorder = events
			if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
				t.Fatal(err)
			}
			var tn authv1beta1.Tenant
			if err := cl.Get(ctx, key, &tn); err != nil {
				t.Fatal(err)
			}
			cond := meta.FindStatusCondition(tn.Status.Conditions, authv1beta1.ReadyCondition)
			if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != ReasonClusterIDNotAllowed ||
				!strings.Contains(cond.Message, names) || !strings.Contains(cond.Message, "--cluster-name") {
				t.Fatalf("condition %+v, want %s naming %s and --cluster-name", cond, ReasonClusterIDNotAllowed, names)
			}
			if tn.Status.AuthParams != nil || meta.IsStatusConditionTrue(tn.Status.Conditions, ConditionHandshakeVerified) {
				t.Fatal("the consumer was accepted")
			}
			if _, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, csrName(id), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				t.Fatalf("a certificate was requested (%v)", err)
			}
			if list, err := cs.RbacV1().RoleBindings(key.Namespace).List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) > 0 {
				t.Fatalf("RoleBindings in the tenant namespace: %v (%v), want none", list, err)
			}
			select {
			case e := <-events.Events:
				if !strings.HasPrefix(e, "Warning "+ReasonClusterIDNotAllowed) || !strings.Contains(e, names) {
					t.Errorf("event %q, want a Warning %s naming %s", e, ReasonClusterIDNotAllowed, names)
				}
			default:
				t.Error("no Event")
			}
		})
	}
}

// handshake signs h, completed with the CSR's key, with fresh Keys, as the
// consumer's signer does.
func handshake(t *testing.T, consumer string, h identity.Handshake) material {
	t.Helper()
	keys, err := identity.Generate()
	if err != nil {
		t.Fatal(err)
	}
	csr, err := NewCSR(keys.Client, consts.ConsumerUser(consumer), consts.ConsumerGroup)
	if err != nil {
		t.Fatal(err)
	}
	if h.ClientKey, err = keys.ClientPublicKey(); err != nil {
		t.Fatal(err)
	}
	sig, err := keys.SignHandshake(h)
	if err != nil {
		t.Fatal(err)
	}
	return material{keys.Public, csr, sig}
}

// TestHandshakeEndToEnd: a consumer's signer answers the provider's nonce,
// the provider verifies it and has the certificates API sign the request,
// and the consumer's kubeconfig authenticates as its user. The certificate
// is for the TLS client key, so what the identity signs never yields a TLS
// identity.
func TestHandshakeEndToEnd(t *testing.T) {
	handshakeEndToEnd(t, "florence", "siena", 0)
}

// handshakeEndToEnd peers consumer with provider, the provider issuing
// certificates of lifetime (its default if 0), and returns the provider's
// TenantReconciler, the Tenant's key, the consumer's IdentityReconciler
// and its Identity's key.
func handshakeEndToEnd(t *testing.T, consumer, provider string, lifetime time.Duration) (*TenantReconciler, types.NamespacedName, *IdentityReconciler, types.NamespacedName) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nonce := issueNonce(ctx, t, consumer)

	// The consumer: liqoctl copies the nonce into its tenant namespace for
	// the provider, and the signer answers.
	createNamespace(ctx, t, consts.TenantNamespace(provider), tenantLabels(provider))
	signer, _ := newSigner(t)
	signer.ClusterID = consumer
	s := toSign(ctx, t, consts.TenantNamespace(provider), consts.SignedNonceSecret, provider, nonce)
	if _, err := signer.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: s.Namespace, Name: s.Name}}); err != nil {
		t.Fatal(err)
	}
	if err := cl.Get(ctx, types.NamespacedName{Namespace: s.Namespace, Name: s.Name}, s); err != nil {
		t.Fatal(err)
	}

	// The provider.
	key := createTenant(ctx, t, consumer, s.Data[consts.PublicKeyKey], s.Data[consts.CSRKey], s.Data[consts.SignatureKey])
	tr := newTenantReconciler(provider)
	tr.CertLifetime = lifetime
	var tn authv1beta1.Tenant
	harness.Eventually(ctx, t, "the Tenant to be Ready", func() (bool, error) {
		if _, err := tr.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
			return false, err
		}
		if err := cl.Get(ctx, key, &tn); err != nil {
			return false, err
		}
		cond := meta.FindStatusCondition(tn.Status.Conditions, authv1beta1.ReadyCondition)
		if cond != nil && cond.Reason == "AuthenticationFailed" {
			t.Fatalf("the provider refused a genuine handshake: %s", cond.Message)
		}
		return cond != nil && cond.Status == metav1.ConditionTrue, nil
	})
	block, _ := pem.Decode(tn.Status.AuthParams.SignedCRT)
	if block == nil {
		t.Fatal("the issued certificate is not PEM")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	certKey := cert.PublicKey.(ed25519.PublicKey)
	if certKey.Equal(signer.Keys.Public) {
		t.Fatal("the TLS client certificate is for the identity key")
	}
	if !certKey.Equal(signer.Keys.Client.Public()) {
		t.Fatal("the TLS client certificate is not for the client key")
	}

	// The consumer again: the Identity liqoctl writes becomes a kubeconfig
	// that the provider accepts.
	idNS := "identity-" + consumer
	createNamespace(ctx, t, idNS, nil)
	id := &authv1beta1.Identity{ObjectMeta: metav1.ObjectMeta{Name: consts.IdentityName(provider), Namespace: idNS},
		Spec: authv1beta1.IdentitySpec{ClusterID: corev1beta1.ClusterID(provider), AuthParams: *tn.Status.AuthParams,
			Namespace: ptr.To(consts.TenantNamespace(consumer))}}
	if err := cl.Create(ctx, id); err != nil {
		t.Fatal(err)
	}
	ir := &IdentityReconciler{Client: cl, Keys: signer.Keys, ClusterID: consumer,
		Remotes: remotecluster.NewRegistry(cl, remotecluster.Options{Scheme: cl.Scheme()})}
	if _, err := ir.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: idNS, Name: id.Name}}); err != nil {
		t.Fatal(err)
	}
	if err := cl.Get(ctx, types.NamespacedName{Namespace: idNS, Name: id.Name}, id); err != nil {
		t.Fatal(err)
	}
	if cond := meta.FindStatusCondition(id.Status.Conditions, authv1beta1.ReadyCondition); cond == nil || cond.Status != metav1.ConditionTrue {
		t.Fatalf("the Identity is not Ready: %+v", cond)
	}
	var kc corev1.Secret
	if err := cl.Get(ctx, types.NamespacedName{Namespace: idNS, Name: consts.KubeconfigSecretName(id.Name)}, &kc); err != nil {
		t.Fatal(err)
	}
	cfg, err := remotecluster.RESTConfig(kc.Data[consts.KubeconfigKey])
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := pem.Decode(cfg.KeyData)
	if kb == nil {
		t.Fatal("the kubeconfig holds no PEM key")
	}
	k, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if k.(ed25519.PrivateKey).Public().(ed25519.PublicKey).Equal(signer.Keys.Public) {
		t.Fatal("the kubeconfig Secret holds the identity's private key")
	}
	return tr, key, ir, types.NamespacedName{Namespace: idNS, Name: id.Name}
}

// signedCert is the certificate in a Tenant's status or an Identity's
// kubeconfig.
func signedCert(t *testing.T, certPEM []byte) *x509.Certificate {
	t.Helper()
	cert, err := parseCert(certPEM)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// TestCertificateRotation: the provider issues certificates of the
// configured lifetime and comes back at two thirds of it to renew; the
// consumer comes back a little later, picks the renewed certificate up from
// its Tenant and writes a kubeconfig the provider accepts. The Tenant
// stays Ready throughout. Time is moved forward on both clocks.
func TestCertificateRotation(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// What a consumer may do in its tenant namespace: read its Tenant.
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "liqo-remote-controlplane"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"authentication.liqo.io"}, Resources: []string{"tenants"}, Verbs: []string{"get", "list", "watch"}}}}
	if err := cl.Create(ctx, role); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	const lifetime = time.Hour
	tr, tkey, ir, ikey := handshakeEndToEnd(t, "cortona", "volterra", lifetime)

	var tn authv1beta1.Tenant
	if err := cl.Get(ctx, tkey, &tn); err != nil {
		t.Fatal(err)
	}
	first := signedCert(t, tn.Status.AuthParams.SignedCRT)
	if left := time.Until(first.NotAfter); left < lifetime-10*time.Minute || left > lifetime+time.Minute {
		t.Fatalf("the certificate expires in %s, want about %s", left.Round(time.Second), lifetime)
	}
	res, err := tr.Reconcile(ctx, ctrl.Request{NamespacedName: tkey})
	if err != nil {
		t.Fatal(err)
	}
	if at := time.Now().Add(res.RequeueAfter); at.Sub(renewAt(first)).Abs() > 5*time.Second {
		t.Errorf("the provider comes back at %s, want the renewal at %s", at, renewAt(first))
	}
	ires, err := ir.Reconcile(ctx, ctrl.Request{NamespacedName: ikey})
	if err != nil {
		t.Fatal(err)
	}
	if ires.RequeueAfter < lifetime/2 {
		t.Errorf("the consumer comes back in %s, before the renewal", ires.RequeueAfter)
	}

	// Forty-five minutes later: past the renewal.
	later := clock(func() time.Time { return time.Now().Add(45 * time.Minute) })
	tr.Now, ir.Now = later, later
	harness.Eventually(ctx, t, "the renewed certificate in the Tenant", func() (bool, error) {
		if _, err := tr.Reconcile(ctx, ctrl.Request{NamespacedName: tkey}); err != nil {
			return false, err
		}
		if err := cl.Get(ctx, tkey, &tn); err != nil {
			return false, err
		}
		if cond := meta.FindStatusCondition(tn.Status.Conditions, authv1beta1.ReadyCondition); cond == nil || cond.Status != metav1.ConditionTrue {
			t.Fatalf("the Tenant left Ready during the renewal: %+v", cond)
		}
		c := signedCert(t, tn.Status.AuthParams.SignedCRT)
		return !c.Equal(first) && !c.NotAfter.Before(first.NotAfter), nil
	})
	renewed := signedCert(t, tn.Status.AuthParams.SignedCRT)

	var id authv1beta1.Identity
	harness.Eventually(ctx, t, "the consumer picking the renewed certificate up", func() (bool, error) {
		if _, err := ir.Reconcile(ctx, ctrl.Request{NamespacedName: ikey}); err != nil {
			return false, err
		}
		if err := cl.Get(ctx, ikey, &id); err != nil {
			return false, err
		}
		return signedCert(t, id.Spec.AuthParams.SignedCRT).Equal(renewed), nil
	})
	if _, err := ir.Reconcile(ctx, ctrl.Request{NamespacedName: ikey}); err != nil {
		t.Fatal(err)
	}
	var kc corev1.Secret
	if err := cl.Get(ctx, types.NamespacedName{Namespace: ikey.Namespace, Name: consts.KubeconfigSecretName(ikey.Name)}, &kc); err != nil {
		t.Fatal(err)
	}
	cfg, err := remotecluster.RESTConfig(kc.Data[consts.KubeconfigKey])
	if err != nil {
		t.Fatal(err)
	}
	if !signedCert(t, cfg.CertData).Equal(renewed) {
		t.Fatal("the kubeconfig does not hold the renewed certificate")
	}
	renewedCluster, err := remotecluster.New("", "", cfg, remotecluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if who, err := whoAmI(ctx, renewedCluster); err != nil || who != consts.ConsumerUser("cortona") {
		t.Fatalf("the renewed kubeconfig: %q, %v", who, err)
	}
}
