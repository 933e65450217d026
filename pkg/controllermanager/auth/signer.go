package auth

import (
	"bytes"
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/identity"
)

// ReasonNonceNotSigned is the Event reason on a signed-nonce Secret the
// signer refuses to answer.
const ReasonNonceNotSigned = "NonceNotSigned"

// SignerReconciler signs, on the consumer, the nonce a provider issued, and
// adds the identity's public key and a certificate request for the TLS
// client key, which liqoctl puts into the Tenant.
//
// The nonce comes from the provider, and anyone who can label a Secret can
// ask for a signature: the signer answers only the Secret liqoctl writes in
// the tenant namespace of a peering, only nonces of consts.NonceSize
// bytes, and signs them only inside a handshake message that names this
// cluster and that provider (identity.Handshake). It never writes to a
// Secret it refuses.
type SignerReconciler struct {
	Client client.Client
	// Reader reads the Secret's namespace from the API server: its labels
	// decide whether we sign, and a cache may not have seen liqoctl label
	// it yet. SetupWithManager defaults it to the manager's API reader.
	Reader    client.Reader
	Keys      *identity.Keys
	ClusterID string
	Recorder  record.EventRecorder
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
	provider, why, err := r.providerOf(ctx, &s)
	if err != nil {
		return ctrl.Result{}, err
	}
	if why == "" && len(nonce) != consts.NonceSize {
		why = fmt.Sprintf("field data.%s has %d bytes, a nonce has exactly %d", consts.NonceKey, len(nonce), consts.NonceSize)
	}
	if why != "" {
		r.refuse(ctx, &s, why)
		return ctrl.Result{}, nil
	}

	user := consts.ConsumerUser(r.ClusterID)
	clientKey, err := r.Keys.ClientPublicKey()
	if err != nil {
		return ctrl.Result{}, err
	}
	h := identity.Handshake{ConsumerID: r.ClusterID, ProviderID: provider, Nonce: nonce, ClientKey: clientKey}
	if r.signed(&s, h, user) {
		return ctrl.Result{}, nil
	}
	csr, err := NewCSR(r.Keys.Client, user, consts.ConsumerGroup)
	if err != nil {
		return ctrl.Result{}, err
	}
	sig, err := r.Keys.SignHandshake(h)
	if err != nil {
		return ctrl.Result{}, err
	}
	s.Data[consts.SignatureKey] = sig
	s.Data[consts.PublicKeyKey] = r.Keys.Public
	s.Data[consts.CSRKey] = csr
	if err := r.Client.Update(ctx, &s); err != nil {
		return ctrl.Result{}, err
	}
	ctrl.LoggerFrom(ctx).Info("signed the nonce of a provider", "provider", provider)
	return ctrl.Result{}, nil
}

// providerOf returns the provider a signed-nonce Secret is for, or why it
// must not be signed. Only the Secret named consts.SignedNonceSecret in the
// tenant namespace of a provider qualifies, and that namespace must carry
// the labels liqoctl gives it: labels on a Namespace take cluster-scoped
// rights to set, unlike a Secret's, which anyone who may write Secrets in
// some namespace controls. Twin namespaces (which a consumer names) never
// qualify.
func (r *SignerReconciler) providerOf(ctx context.Context, s *corev1.Secret) (provider, why string, err error) {
	provider, ok := consts.ClusterIDOfTenantNamespace(s.Namespace)
	switch {
	case !ok:
		return "", fmt.Sprintf("namespace %s is not a tenant namespace (%s)", s.Namespace, consts.TenantNamespace("<provider>")), nil
	case consts.ValidateClusterID(provider) != nil:
		return "", fmt.Sprintf("namespace %s does not name a valid provider: %v", s.Namespace, consts.ValidateClusterID(provider)), nil
	case provider == r.ClusterID:
		return "", fmt.Sprintf("namespace %s names this cluster itself", s.Namespace), nil
	case s.Name != consts.SignedNonceSecret:
		return "", fmt.Sprintf("only Secret %s is signed in a tenant namespace, not %s", consts.SignedNonceSecret, s.Name), nil
	case s.Labels[consts.RemoteClusterIDLabel] != provider:
		return "", fmt.Sprintf("label %s of the Secret is %q, but its namespace is the tenant namespace of %q",
			consts.RemoteClusterIDLabel, s.Labels[consts.RemoteClusterIDLabel], provider), nil
	}
	var ns corev1.Namespace
	if err := r.Reader.Get(ctx, types.NamespacedName{Name: s.Namespace}, &ns); apierrors.IsNotFound(err) {
		return "", fmt.Sprintf("namespace %s does not exist", s.Namespace), nil
	} else if err != nil {
		return "", "", fmt.Errorf("reading namespace %s: %w", s.Namespace, err)
	}
	l := ns.Labels
	switch {
	case l[consts.TenantNamespaceLabel] != "true" || l[consts.RemoteClusterIDLabel] != provider || l[consts.ManagedByLabel] != consts.ManagedByValue:
		return "", fmt.Sprintf("namespace %s is not labelled as the tenant namespace of %s (%s=true, %s=%s, %s=%s)", s.Namespace, provider,
			consts.TenantNamespaceLabel, consts.RemoteClusterIDLabel, provider, consts.ManagedByLabel, consts.ManagedByValue), nil
	case l[consts.TwinNamespaceLabel] != "":
		return "", fmt.Sprintf("namespace %s is a twin namespace (label %s)", s.Namespace, consts.TwinNamespaceLabel), nil
	case !ns.DeletionTimestamp.IsZero():
		return "", fmt.Sprintf("namespace %s is being deleted", s.Namespace), nil
	}
	return provider, "", nil
}

// signed tells whether s already holds our answer to h: our public key, a
// request for our client key and user, and a valid signature.
func (r *SignerReconciler) signed(s *corev1.Secret, h identity.Handshake, user string) bool {
	if !bytes.Equal(s.Data[consts.PublicKeyKey], r.Keys.Public) {
		return false
	}
	key, err := CheckCSR(s.Data[consts.CSRKey], r.Keys.Public, user, consts.ConsumerGroup)
	if err != nil || !bytes.Equal(key, h.ClientKey) {
		return false
	}
	return identity.VerifyHandshake(r.Keys.Public, h, s.Data[consts.SignatureKey]) == nil
}

// refuse reports a Secret the signer will not answer, without touching it.
// It is not retried: a change to the Secret brings it back.
func (r *SignerReconciler) refuse(ctx context.Context, s *corev1.Secret, why string) {
	ctrl.LoggerFrom(ctx).Info("not signing the nonce", "reason", why)
	if r.Recorder != nil {
		r.Recorder.Eventf(s, corev1.EventTypeWarning, ReasonNonceNotSigned, "not signing this nonce: %s", why)
	}
}

// SetupWithManager registers the controller.
func (r *SignerReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Reader == nil {
		r.Reader = mgr.GetAPIReader()
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorderFor("liqo-nonce-signer")
	}
	return ctrl.NewControllerManagedBy(mgr).Named("nonce-signer").
		For(&corev1.Secret{}, builder.WithPredicates(hasLabel(consts.NonceSecretLabel, consts.NonceToSign))).
		Complete(r)
}
