package auth

import (
	"bytes"
	"context"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/identity"
)

// SignerReconciler signs, on the consumer, the nonce a provider issued, and
// adds the public key and the certificate request liqoctl puts into the
// Tenant. The private key never leaves this process.
type SignerReconciler struct {
	Client    client.Client
	Keys      *identity.Keys
	ClusterID string
}

// Reconcile signs the nonce if it is not signed by our key yet.
func (r *SignerReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var s corev1.Secret
	if err := r.Client.Get(ctx, req.NamespacedName, &s); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	nonce := s.Data[consts.NonceKey]
	if len(nonce) == 0 {
		return ctrl.Result{}, nil
	}
	if identity.Verify(r.Keys.Public, nonce, s.Data[consts.SignatureKey]) == nil &&
		bytes.Equal(s.Data[consts.PublicKeyKey], r.Keys.Public) && len(s.Data[consts.CSRKey]) > 0 {
		return ctrl.Result{}, nil
	}
	csr, err := NewCSR(r.Keys.Private, consts.ConsumerUser(r.ClusterID), consts.ConsumerGroup)
	if err != nil {
		return ctrl.Result{}, err
	}
	s.Data[consts.SignatureKey] = r.Keys.Sign(nonce)
	s.Data[consts.PublicKeyKey] = r.Keys.Public
	s.Data[consts.CSRKey] = csr
	return ctrl.Result{}, r.Client.Update(ctx, &s)
}

// SetupWithManager registers the controller.
func (r *SignerReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("nonce-signer").
		For(&corev1.Secret{}, builder.WithPredicates(hasLabel(consts.NonceSecretLabel, consts.NonceToSign))).
		Complete(r)
}
