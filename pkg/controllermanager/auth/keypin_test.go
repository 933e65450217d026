package auth

import (
	"context"
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
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/identity"
	"github.com/liqo-go/liqo/test/harness"
)

// TestTenantKeyPinned: once consumer livorno has peered, a second cluster
// claiming the ID livorno, with an identity of its own and a genuine
// signature over the provider's nonce, is refused, whether it rewrites the
// Tenant or deletes and recreates it: the Tenant says PublicKeyChanged
// (with a Warning Event), no certificate is requested for its key, and
// livorno's certificate and RoleBinding stay. The provider's administrator
// removing the pin is what accepts a new key.
func TestTenantKeyPinned(t *testing.T) {
	const consumer, provider = "livorno", "grosseto"
	tr, key, _, _ := handshakeEndToEnd(t, consumer, provider, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var ns corev1.Namespace
	if err := cl.Get(ctx, client.ObjectKey{Name: key.Namespace}, &ns); err != nil {
		t.Fatal(err)
	}
	if ns.Annotations[consts.ConsumerPublicKeyAnnotation] == "" {
		t.Fatalf("no key pinned on %s: %v", key.Namespace, ns.Annotations)
	}
	var before authv1beta1.Tenant
	if err := cl.Get(ctx, key, &before); err != nil {
		t.Fatal(err)
	}

	var nonce corev1.Secret
	if err := cl.Get(ctx, types.NamespacedName{Namespace: key.Namespace, Name: consts.NonceSecret}, &nonce); err != nil {
		t.Fatal(err)
	}
	impostor := handshake(t, consumer, identity.Handshake{ConsumerID: consumer, ProviderID: provider, Nonce: nonce.Data[consts.NonceKey]})

	refused := func(t *testing.T) {
		t.Helper()
		events := record.NewFakeRecorder(10)
		tr.Recorder = events
		if _, err := tr.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
			t.Fatal(err)
		}
		var tn authv1beta1.Tenant
		if err := cl.Get(ctx, key, &tn); err != nil {
			t.Fatal(err)
		}
		cond := meta.FindStatusCondition(tn.Status.Conditions, authv1beta1.ReadyCondition)
		if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != ReasonPublicKeyChanged ||
			!strings.Contains(cond.Message, consts.ConsumerPublicKeyAnnotation) {
			t.Fatalf("condition %+v, want %s naming the pin", cond, ReasonPublicKeyChanged)
		}
		if meta.IsStatusConditionTrue(tn.Status.Conditions, ConditionHandshakeVerified) &&
			meta.FindStatusCondition(tn.Status.Conditions, ConditionHandshakeVerified).ObservedGeneration == tn.Generation {
			t.Error("the impostor's handshake was recorded as verified")
		}
		if _, err := cs.CertificatesV1().CertificateSigningRequests().Get(ctx, csrName(consumer), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("a certificate was requested for the impostor (%v)", err)
		}
		if tn.Status.AuthParams != nil && string(tn.Status.AuthParams.SignedCRT) != string(before.Status.AuthParams.SignedCRT) {
			t.Error("the Tenant's certificate changed")
		}
		select {
		case e := <-events.Events:
			if !strings.HasPrefix(e, "Warning "+ReasonPublicKeyChanged) {
				t.Errorf("event %q, want a Warning %s", e, ReasonPublicKeyChanged)
			}
		default:
			t.Error("no Event")
		}
		var rb rbacv1.RoleBinding
		if err := cl.Get(ctx, types.NamespacedName{Namespace: key.Namespace, Name: "liqo-consumer-controlplane"}, &rb); err != nil {
			t.Errorf("livorno's RoleBinding: %v", err)
		}
	}

	t.Run("the Tenant rewritten", func(t *testing.T) {
		var tn authv1beta1.Tenant
		if err := cl.Get(ctx, key, &tn); err != nil {
			t.Fatal(err)
		}
		tn.Spec.PublicKey, tn.Spec.CSR, tn.Spec.Signature = impostor.pub, impostor.csr, impostor.sig
		if err := cl.Update(ctx, &tn); err != nil {
			t.Fatal(err)
		}
		refused(t)
	})

	t.Run("the Tenant deleted and recreated", func(t *testing.T) {
		if err := cl.Delete(ctx, &authv1beta1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}); err != nil {
			t.Fatal(err)
		}
		harness.Eventually(ctx, t, "the Tenant to be gone", func() (bool, error) {
			err := cl.Get(ctx, key, &authv1beta1.Tenant{})
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
		createTenant(ctx, t, consumer, impostor.pub, impostor.csr, impostor.sig)
		before.Status.AuthParams = nil // the new Tenant has none to keep
		refused(t)
	})

	t.Run("the pin removed by the provider's administrator", func(t *testing.T) {
		patch := []byte(`{"metadata":{"annotations":{"` + consts.ConsumerPublicKeyAnnotation + `":null}}}`)
		if err := cl.Patch(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: key.Namespace}}, client.RawPatch(types.MergePatchType, patch)); err != nil {
			t.Fatal(err)
		}
		harness.Eventually(ctx, t, "the new key to be accepted", func() (bool, error) {
			if _, err := tr.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil {
				return false, err
			}
			var tn authv1beta1.Tenant
			if err := cl.Get(ctx, key, &tn); err != nil {
				return false, err
			}
			return meta.IsStatusConditionTrue(tn.Status.Conditions, authv1beta1.ReadyCondition), nil
		})
	})
}
