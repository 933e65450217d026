package auth

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/identity"
	"github.com/liqo-go/liqo/test/harness"
)

func nonceKey(consumer string) types.NamespacedName {
	return types.NamespacedName{Namespace: consts.TenantNamespace(consumer), Name: consts.NonceSecret}
}

// reconcileNonce runs r on consumer's nonce Secret and returns it as stored.
func reconcileNonce(ctx context.Context, t *testing.T, r *NonceReconciler, consumer string) (*corev1.Secret, ctrl.Result) {
	t.Helper()
	res, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: nonceKey(consumer)})
	if err != nil {
		t.Fatal(err)
	}
	var s corev1.Secret
	if err := cl.Get(ctx, nonceKey(consumer), &s); err != nil {
		t.Fatal(err)
	}
	return &s, res
}

// editNonceSecret changes consumer's nonce Secret as stored.
func editNonceSecret(ctx context.Context, t *testing.T, consumer string, edit func(*corev1.Secret)) {
	t.Helper()
	var s corev1.Secret
	if err := cl.Get(ctx, nonceKey(consumer), &s); err != nil {
		t.Fatal(err)
	}
	edit(&s)
	if err := cl.Update(ctx, &s); err != nil {
		t.Fatal(err)
	}
}

// tenantCondition reconciles the Tenant key with tr until it is Ready or
// refused, and returns its Ready condition.
func tenantCondition(ctx context.Context, t *testing.T, tr *TenantReconciler, key types.NamespacedName) *metav1.Condition {
	t.Helper()
	var cond *metav1.Condition
	harness.Eventually(ctx, t, "the Tenant answered", func() (bool, error) {
		if _, err := tr.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
			return false, err
		}
		var tn authv1beta1.Tenant
		if err := cl.Get(ctx, key, &tn); err != nil {
			return false, err
		}
		cond = meta.FindStatusCondition(tn.Status.Conditions, authv1beta1.ReadyCondition)
		return cond != nil && (cond.Status == metav1.ConditionTrue || cond.Reason == "AuthenticationFailed"), nil
	})
	return cond
}

// TestNonceRotatesOnceUsed: once a Tenant authenticated with the nonce, it
// is replaced; the Tenant stays Ready (its verified generation is not
// checked again), and the same signed handshake presented again in a new
// Tenant is refused. Before, the nonce never changed, so a handshake that
// leaked could be replayed forever.
func TestNonceRotatesOnceUsed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const consumer = "pisa"
	nr := &NonceReconciler{Client: cl, ClusterID: providerID}
	nonce := issueNonce(ctx, t, consumer)
	if s, _ := reconcileNonce(ctx, t, nr, consumer); !bytes.Equal(s.Data[consts.NonceKey], nonce) {
		t.Fatal("a nonce no Tenant used was rotated")
	}
	m := handshake(t, consumer, identity.Handshake{ConsumerID: consumer, ProviderID: providerID, Nonce: nonce})
	key := createTenant(ctx, t, consumer, m.pub, m.csr, m.sig)
	tr := newTenantReconciler(providerID)
	if c := tenantCondition(ctx, t, tr, key); c.Status != metav1.ConditionTrue {
		t.Fatalf("a genuine handshake: %+v", c)
	}

	s, _ := reconcileNonce(ctx, t, nr, consumer)
	if bytes.Equal(s.Data[consts.NonceKey], nonce) || len(s.Data[consts.NonceKey]) != consts.NonceSize {
		t.Fatal("the nonce a Tenant authenticated with was not replaced")
	}
	if !bytes.Equal(s.Data[previousNonceKey], nonce) || s.Annotations[previousValidUntilAnnotation] == "" {
		t.Errorf("the replaced nonce is not kept for its grace: %v", s.Annotations)
	}
	rotated := s.Data[consts.NonceKey]
	if again, _ := reconcileNonce(ctx, t, nr, consumer); !bytes.Equal(again.Data[consts.NonceKey], rotated) {
		t.Error("the new nonce, which no Tenant used, was replaced too")
	}
	if c := tenantCondition(ctx, t, tr, key); c.Status != metav1.ConditionTrue {
		t.Fatalf("the authenticated Tenant once its nonce rotated: %+v", c)
	}

	// The grace over, the replaced nonce is gone, and a new Tenant
	// presenting the same handshake is refused.
	editNonceSecret(ctx, t, consumer, func(s *corev1.Secret) {
		s.Annotations[previousValidUntilAnnotation] = time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	})
	if s, _ := reconcileNonce(ctx, t, nr, consumer); len(s.Data[previousNonceKey]) != 0 {
		t.Error("the replaced nonce is kept past its grace")
	}
	if c := tenantCondition(ctx, t, tr, key); c.Status != metav1.ConditionTrue {
		t.Fatalf("the authenticated Tenant once the nonce it used is gone: %+v", c)
	}
	var tn authv1beta1.Tenant
	if err := cl.Get(ctx, key, &tn); err != nil {
		t.Fatal(err)
	}
	if err := cl.Delete(ctx, &tn); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(ctx, t, "the Tenant deleted", func() (bool, error) {
		err := cl.Get(ctx, key, &authv1beta1.Tenant{})
		return err != nil, nil
	})
	key = createTenant(ctx, t, consumer, m.pub, m.csr, m.sig)
	if c := tenantCondition(ctx, t, tr, key); c.Reason != "AuthenticationFailed" || !strings.Contains(c.Message, "spec.signature does not verify") {
		t.Errorf("a replayed handshake over a used nonce: %+v, want AuthenticationFailed naming spec.signature", c)
	}
}

// TestNonceExpiresWithGrace: a nonce older than its lifetime is replaced,
// and a peering that read it just before still completes within the grace;
// after the grace the same handshake is refused.
func TestNonceExpiresWithGrace(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nr := &NonceReconciler{Client: cl, ClusterID: providerID}
	tr := newTenantReconciler(providerID)
	age := func(consumer string) {
		editNonceSecret(ctx, t, consumer, func(s *corev1.Secret) {
			s.Annotations[nonceIssuedAnnotation] = time.Now().Add(-DefaultNonceLifetime - time.Minute).UTC().Format(time.RFC3339)
		})
	}

	// liqoctl read the nonce and had it signed; it expires before the
	// Tenant is written.
	const inTime = "lucca"
	nonce := issueNonce(ctx, t, inTime)
	m := handshake(t, inTime, identity.Handshake{ConsumerID: inTime, ProviderID: providerID, Nonce: nonce})
	age(inTime)
	s, res := reconcileNonce(ctx, t, nr, inTime)
	if bytes.Equal(s.Data[consts.NonceKey], nonce) {
		t.Fatal("an expired nonce was not replaced")
	}
	if res.RequeueAfter <= 0 || res.RequeueAfter > DefaultNonceGrace {
		t.Errorf("requeued after %v, want within the grace (%v) to drop the replaced nonce", res.RequeueAfter, DefaultNonceGrace)
	}
	key := createTenant(ctx, t, inTime, m.pub, m.csr, m.sig)
	if c := tenantCondition(ctx, t, tr, key); c.Status != metav1.ConditionTrue {
		t.Errorf("a handshake over the nonce replaced a moment ago: %+v, want Ready", c)
	}

	// The same, with the Tenant written after the grace.
	const late = "arezzo"
	nonce = issueNonce(ctx, t, late)
	m = handshake(t, late, identity.Handshake{ConsumerID: late, ProviderID: providerID, Nonce: nonce})
	age(late)
	reconcileNonce(ctx, t, nr, late)
	editNonceSecret(ctx, t, late, func(s *corev1.Secret) {
		s.Annotations[previousValidUntilAnnotation] = time.Now().Add(-time.Second).UTC().Format(time.RFC3339)
	})
	key = createTenant(ctx, t, late, m.pub, m.csr, m.sig)
	if c := tenantCondition(ctx, t, tr, key); c.Reason != "AuthenticationFailed" || !strings.Contains(c.Message, "spec.signature does not verify") {
		t.Errorf("a handshake over a nonce replaced before the grace: %+v, want AuthenticationFailed naming spec.signature", c)
	}
}

// TestNonceWithoutIssueTimeIsKept: a nonce issued before nonces had a
// lifetime keeps its value; its lifetime starts now.
func TestNonceWithoutIssueTimeIsKept(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const consumer = "prato"
	nonce := issueNonce(ctx, t, consumer)
	editNonceSecret(ctx, t, consumer, func(s *corev1.Secret) { delete(s.Annotations, nonceIssuedAnnotation) })
	s, res := reconcileNonce(ctx, t, &NonceReconciler{Client: cl, ClusterID: providerID}, consumer)
	if !bytes.Equal(s.Data[consts.NonceKey], nonce) || s.Annotations[nonceIssuedAnnotation] == "" {
		t.Errorf("nonce replaced (%v) or not stamped (%v)", !bytes.Equal(s.Data[consts.NonceKey], nonce), s.Annotations)
	}
	if res.RequeueAfter != DefaultNonceLifetime {
		t.Errorf("requeued after %v, want the lifetime", res.RequeueAfter)
	}
}
