// Package auth holds the controllers of the authentication handshake: the
// provider issues a nonce, the consumer signs it with its identity key
// inside a message binding both cluster IDs and its TLS client key, the
// provider verifies the signature and issues a client certificate for that
// TLS key (Tenant), and the consumer turns that certificate into a
// kubeconfig (Identity).
package auth

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/identity"
)

const (
	// DefaultNonceLifetime is how long a nonce no Tenant used is offered:
	// a signed handshake that leaked cannot be replayed for longer.
	DefaultNonceLifetime = 24 * time.Hour
	// DefaultNonceGrace is how long the nonce replaced by a rotation is
	// still accepted: liqoctl peer reads the nonce, has the consumer sign
	// it and only then writes the Tenant, and a rotation in between must
	// not fail that peering.
	DefaultNonceGrace = 10 * time.Minute
	// ConditionHandshakeVerified on a Tenant says the provider verified
	// its signed handshake for the generation it names (ObservedGeneration):
	// that generation stays authenticated when the nonce rotates.
	ConditionHandshakeVerified = "HandshakeVerified"

	// nonceIssuedAnnotation on a nonce Secret is when its nonce was
	// issued (RFC 3339), which its lifetime counts from.
	nonceIssuedAnnotation = "liqo.io/nonce-issued-at"
	// previousNonceKey holds the nonce a rotation replaced, accepted until
	// previousValidUntilAnnotation (RFC 3339), then dropped.
	previousNonceKey             = "previousNonce"
	previousValidUntilAnnotation = "liqo.io/previous-nonce-valid-until"
)

// NonceReconciler fills the provider's nonce Secrets with a fresh nonce and
// rotates it once a Tenant authenticated with it (a signed handshake is
// then useless to replay) or once it is older than Lifetime, keeping the
// replaced one valid for Grace.
type NonceReconciler struct {
	Client client.Client
	// ClusterID is this provider's: with it the reconciler recognises a
	// nonce a Tenant's verified handshake was made over.
	ClusterID string
	// Lifetime and Grace default to DefaultNonceLifetime and
	// DefaultNonceGrace.
	Lifetime, Grace time.Duration
}

// Reconcile issues the nonce of a Secret that has none, rotates a used or
// expired one, and drops the replaced nonce once its grace is over.
func (r *NonceReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var s corev1.Secret
	if err := r.Client.Get(ctx, req.NamespacedName, &s); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if s.Labels[consts.NonceSecretLabel] != consts.NonceIssued {
		// A Tenant's namespace may hold a Secret of that name that is not
		// ours to fill.
		return ctrl.Result{}, nil
	}
	now := time.Now()
	nonce := s.Data[consts.NonceKey]
	if len(nonce) == 0 {
		return r.rotate(ctx, &s, now, false)
	}
	issued, err := time.Parse(time.RFC3339, s.Annotations[nonceIssuedAnnotation])
	if err != nil {
		// Issued before nonces had a lifetime (or the mark was edited):
		// the lifetime starts now.
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, nonceIssuedAnnotation, now.UTC().Format(time.RFC3339))
		return ctrl.Result{RequeueAfter: r.lifetime()}, r.Client.Update(ctx, &s)
	}
	used, err := r.used(ctx, s.Namespace, nonce)
	if err != nil {
		return ctrl.Result{}, err
	}
	if used || now.Sub(issued) >= r.lifetime() {
		ctrl.LoggerFrom(ctx).Info("rotating the nonce", "used", used, "issued", issued)
		return r.rotate(ctx, &s, now, true)
	}
	next := r.lifetime() - now.Sub(issued)
	if until, ok := previousValidUntil(&s); ok {
		if !now.Before(until) {
			delete(s.Data, previousNonceKey)
			delete(s.Annotations, previousValidUntilAnnotation)
			return ctrl.Result{RequeueAfter: next}, r.Client.Update(ctx, &s)
		}
		next = min(next, until.Sub(now))
	}
	return ctrl.Result{RequeueAfter: next}, nil
}

func (r *NonceReconciler) lifetime() time.Duration {
	if r.Lifetime > 0 {
		return r.Lifetime
	}
	return DefaultNonceLifetime
}

func (r *NonceReconciler) grace() time.Duration {
	if r.Grace > 0 {
		return r.Grace
	}
	return DefaultNonceGrace
}

// rotate stores a new nonce in s, keeping the current one for the grace
// period if keepPrevious. A conflicting write fails and is retried from the
// Secret as stored.
func (r *NonceReconciler) rotate(ctx context.Context, s *corev1.Secret, now time.Time, keepPrevious bool) (ctrl.Result, error) {
	nonce, err := identity.NewNonce()
	if err != nil {
		return ctrl.Result{}, err
	}
	if s.Data == nil {
		s.Data = map[string][]byte{}
	}
	next := r.lifetime()
	if keepPrevious && len(s.Data[consts.NonceKey]) > 0 {
		s.Data[previousNonceKey] = s.Data[consts.NonceKey]
		metav1.SetMetaDataAnnotation(&s.ObjectMeta, previousValidUntilAnnotation, now.Add(r.grace()).UTC().Format(time.RFC3339))
		next = min(next, r.grace())
	} else {
		delete(s.Data, previousNonceKey)
		delete(s.Annotations, previousValidUntilAnnotation)
	}
	s.Data[consts.NonceKey] = nonce
	metav1.SetMetaDataAnnotation(&s.ObjectMeta, nonceIssuedAnnotation, now.UTC().Format(time.RFC3339))
	return ctrl.Result{RequeueAfter: next}, r.Client.Update(ctx, s)
}

// used reports whether a Tenant of namespace authenticated with nonce: its
// handshake, verified for its current generation, is signed over it.
func (r *NonceReconciler) used(ctx context.Context, namespace string, nonce []byte) (bool, error) {
	if r.ClusterID == "" {
		return false, nil
	}
	var tenants authv1beta1.TenantList
	if err := r.Client.List(ctx, &tenants, client.InNamespace(namespace)); err != nil {
		return false, err
	}
	for i := range tenants.Items {
		t := &tenants.Items[i]
		if !handshakeVerified(t) {
			continue
		}
		clientKey, err := CheckCSR(t.Spec.CSR, t.Spec.PublicKey, consts.ConsumerUser(string(t.Spec.ClusterID)), consts.ConsumerGroup)
		if err == nil && identity.VerifyHandshake(t.Spec.PublicKey, handshakeOf(t, r.ClusterID, nonce, clientKey), t.Spec.Signature) == nil {
			return true, nil
		}
	}
	return false, nil
}

// handshakeOf is the handshake the consumer of t must have signed over
// nonce for provider, for the certificate of clientKey.
func handshakeOf(t *authv1beta1.Tenant, provider string, nonce, clientKey []byte) identity.Handshake {
	return identity.Handshake{ConsumerID: string(t.Spec.ClusterID), ProviderID: provider, Nonce: nonce, ClientKey: clientKey}
}

// handshakeVerified reports whether t's handshake was verified for its
// current generation.
func handshakeVerified(t *authv1beta1.Tenant) bool {
	c := meta.FindStatusCondition(t.Status.Conditions, ConditionHandshakeVerified)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == t.Generation
}

// acceptedNonces are the nonces of s a handshake may be signed over at now:
// the current one, and the one before it during its grace.
func acceptedNonces(s *corev1.Secret, now time.Time) [][]byte {
	out := [][]byte{s.Data[consts.NonceKey]}
	if until, ok := previousValidUntil(s); ok && now.Before(until) && len(s.Data[previousNonceKey]) > 0 {
		out = append(out, s.Data[previousNonceKey])
	}
	return out
}

func previousValidUntil(s *corev1.Secret) (time.Time, bool) {
	v, ok := s.Annotations[previousValidUntilAnnotation]
	if !ok {
		return time.Time{}, false
	}
	until, err := time.Parse(time.RFC3339, v)
	return until, err == nil
}

// SetupWithManager registers the controller; Tenant changes requeue the
// nonce Secret of their namespace, which a verified Tenant may have used.
func (r *NonceReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("nonce").
		For(&corev1.Secret{}, builder.WithPredicates(hasLabel(consts.NonceSecretLabel, consts.NonceIssued))).
		Watches(&authv1beta1.Tenant{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: consts.NonceSecret}}}
		})).
		Complete(r)
}

func hasLabel(key, value string) predicate.Predicate {
	return predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()[key] == value })
}
