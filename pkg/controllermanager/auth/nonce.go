// Package auth holds the controllers of the authentication handshake: the
// provider issues a nonce, the consumer signs it with its identity key
// inside a message binding both cluster IDs and its TLS client key, the
// provider verifies the signature and issues a client certificate for that
// TLS key (Tenant), and the consumer turns that certificate into a
// kubeconfig (Identity).
package auth

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/identity"
)

// NonceReconciler fills the provider's nonce Secrets with a fresh nonce.
type NonceReconciler struct {
	Client client.Client
}

// Reconcile generates the nonce once; it never changes afterwards, so a
// consumer that already signed it can retry the Tenant creation.
func (r *NonceReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var s corev1.Secret
	if err := r.Client.Get(ctx, req.NamespacedName, &s); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if len(s.Data[consts.NonceKey]) > 0 {
		return ctrl.Result{}, nil
	}
	nonce, err := identity.NewNonce()
	if err != nil {
		return ctrl.Result{}, err
	}
	if s.Data == nil {
		s.Data = map[string][]byte{}
	}
	s.Data[consts.NonceKey] = nonce
	return ctrl.Result{}, r.Client.Update(ctx, &s)
}

// SetupWithManager registers the controller.
func (r *NonceReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("nonce").
		For(&corev1.Secret{}, builder.WithPredicates(hasLabel(consts.NonceSecretLabel, consts.NonceIssued))).
		Complete(r)
}

func hasLabel(key, value string) predicate.Predicate {
	return predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()[key] == value })
}
