package auth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/identity"
	"github.com/liqo-go/liqo/pkg/kit"
	"github.com/liqo-go/liqo/pkg/twinname"
)

// tenantAnnotation on a CertificateSigningRequest points back at its Tenant.
const tenantAnnotation = "liqo.io/tenant"

// TenantReconciler serves, on the provider, a consumer's Tenant: it checks
// the signed nonce and the certificate request, has the cluster's
// certificates API issue the consumer's client certificate, and grants that
// user the consumer role in the tenant namespace only.
type TenantReconciler struct {
	Client       client.Client
	Clientset    kubernetes.Interface
	ClusterID    string
	CA           []byte
	APIServerURL string
	ClusterRole  string
	Recorder     record.EventRecorder
	// CertLifetime is the consumers' client certificates' (default
	// DefaultCertLifetime); they are renewed at two thirds of it.
	CertLifetime time.Duration
	// Now is the reconciler's clock (time.Now if nil).
	Now clock
	// ReservedNamespaces are the names and patterns no twin may take here
	// (the provider's --reserved-twin-namespaces): a consumer whose
	// DefaultName twins "<namespace>-<id>" would hit one, or a well-known
	// namespace, is not accepted.
	ReservedNamespaces []string
	// Budget, when set, is the consumers' ObjectBudget usage, reported in
	// their Tenants' status.
	Budget BudgetSource
}

// ReasonClusterIDNotAllowed is the Ready condition's reason of a Tenant
// whose consumer cluster ID this provider refuses.
const ReasonClusterIDNotAllowed = "ClusterIDNotAllowed"

// Reconcile drives one Tenant to Ready or explains why it cannot be.
func (r *TenantReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var t authv1beta1.Tenant
	if err := r.Client.Get(ctx, req.NamespacedName, &t); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !t.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	// Whatever the authentication's state: a consumer refused now may
	// still keep objects here from before.
	if err := r.reportBudget(ctx, &t); err != nil {
		return ctrl.Result{}, err
	}
	consumer := string(t.Spec.ClusterID)
	user := consts.ConsumerUser(consumer)
	// The ID binds acceptance: a Tenant accepted before the list changed
	// keeps its peering, and the twin-name rules still bind its twins.
	if !handshakeVerified(&t) {
		if err := twinname.CheckID(consumer, r.ReservedNamespaces); err != nil {
			return ctrl.Result{}, r.setReady(ctx, &t, false, ReasonClusterIDNotAllowed, err.Error())
		}
	}
	clientKey, err := r.verify(ctx, &t, user)
	if err != nil {
		return ctrl.Result{}, r.setReady(ctx, &t, false, "AuthenticationFailed", err.Error())
	}
	if err := r.checkPin(ctx, &t); errors.As(err, &errKeyChanged{}) {
		// Nothing else changes: the RoleBinding and the certificate of the
		// pinned key stay, the new key gets nothing.
		return ctrl.Result{}, r.setReady(ctx, &t, false, ReasonPublicKeyChanged, err.Error())
	} else if err != nil {
		return ctrl.Result{}, err
	}
	if !handshakeVerified(&t) {
		// Recorded before anything else: from now on the nonce may rotate
		// (the NonceReconciler sees it used) without failing this Tenant.
		before := t.DeepCopy()
		kit.SetCondition(&t.Status.Conditions, t.Generation, kit.Condition{Type: ConditionHandshakeVerified, OK: true,
			Reason: "SignatureVerified", Message: "the consumer's handshake is signed over a nonce this provider issued"})
		if err := kit.PatchStatus(ctx, r.Client, &t, before); err != nil {
			return ctrl.Result{}, err
		}
	}

	crt := []byte(nil)
	if t.Status.AuthParams != nil && certMatches(t.Status.AuthParams.SignedCRT, clientKey, r.Now.now()) {
		crt = t.Status.AuthParams.SignedCRT
	} else {
		if crt, err = r.issue(ctx, &t, clientKey); err != nil {
			return ctrl.Result{}, err
		}
		if crt == nil { // the signer has not answered yet; its update requeues us
			if r.renewing(&t, clientKey) {
				// The current certificate still works: the Tenant stays as
				// it is until the renewed one replaces it.
				return ctrl.Result{RequeueAfter: 30 * time.Second}, nil
			}
			return ctrl.Result{}, r.setReady(ctx, &t, false, "CertificatePending", "waiting for the certificates API to sign the consumer's certificate")
		}
	}
	if err := r.ensureRoleBinding(ctx, &t, user); err != nil {
		return ctrl.Result{}, err
	}

	// The parameters change without the condition when the certificate
	// is renewed: both are compared with what was there before.
	before := t.DeepCopy()
	t.Status.TenantNamespace = t.Namespace
	t.Status.AuthParams = &authv1beta1.AuthParams{CA: r.CA, SignedCRT: crt, APIServer: r.APIServerURL}
	if err := r.setReadyFrom(ctx, &t, before, true, "Authenticated", fmt.Sprintf("consumer %s authenticated as user %s", consumer, user)); err != nil {
		return ctrl.Result{}, err
	}
	// The request served its purpose; its certificate now lives in the status.
	err = r.Clientset.CertificatesV1().CertificateSigningRequests().Delete(ctx, csrName(consumer), metav1.DeleteOptions{})
	// Back at the renewal: nothing else would wake us then.
	result := ctrl.Result{}
	if cert, ok := certFor(crt, clientKey); ok {
		result.RequeueAfter = until(r.Now.now(), renewAt(cert))
	}
	return result, client.IgnoreNotFound(err)
}

// verify checks that the Tenant sits in the consumer's tenant namespace,
// that its certificate request is for the consumer's own user and for a key
// other than its identity, and that the consumer signed, with the identity
// it presents, the handshake of this namespace's nonce for itself, this
// provider and that request's key. It returns that key (PKIX DER). Every
// field of the signed handshake comes from what this provider knows: its own
// ID, the consumer ID its namespace is named after, the nonce it issued (the
// current one, or the one a rotation replaced, during its grace). A
// generation whose handshake was verified is not checked again: its nonce
// has rotated since.
func (r *TenantReconciler) verify(ctx context.Context, t *authv1beta1.Tenant, user string) ([]byte, error) {
	consumer := string(t.Spec.ClusterID)
	if want := consts.TenantNamespace(consumer); t.Namespace != want {
		return nil, fmt.Errorf("the Tenant of cluster %s must be in namespace %s, not %s", consumer, want, t.Namespace)
	}
	if t.Spec.AuthzPolicy == authv1beta1.TolerateNoHandshakePolicy {
		return nil, fmt.Errorf("authzPolicy %s is not supported: the nonce handshake is always required", t.Spec.AuthzPolicy)
	}
	clientKey, err := CheckCSR(t.Spec.CSR, t.Spec.PublicKey, user, consts.ConsumerGroup)
	if err != nil {
		return nil, fmt.Errorf("spec.csr: %w", err)
	}
	if handshakeVerified(t) {
		return clientKey, nil
	}
	var nonce corev1.Secret
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: t.Namespace, Name: consts.NonceSecret}, &nonce); err != nil {
		return nil, fmt.Errorf("reading the nonce Secret %s/%s: %w", t.Namespace, consts.NonceSecret, err)
	}
	var first error
	for _, n := range acceptedNonces(&nonce, time.Now()) {
		err := identity.VerifyHandshake(t.Spec.PublicKey, handshakeOf(t, r.ClusterID, n, clientKey), t.Spec.Signature)
		if err == nil {
			return clientKey, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, fmt.Errorf("spec.signature does not verify with spec.publicKey over the handshake of consumer %s, provider %s, the issued nonce and the CSR's key: %w",
		consumer, r.ClusterID, first)
}

func csrName(consumer string) string { return "liqo-tenant-" + consumer }

// spent reports whether the certificate csr holds is the one t has, or
// one that has expired: a leftover that renewing must not hand out again.
func (r *TenantReconciler) spent(t *authv1beta1.Tenant, csr *certv1.CertificateSigningRequest, clientKey []byte) bool {
	if len(csr.Status.Certificate) == 0 {
		return false
	}
	if t.Status.AuthParams != nil && bytes.Equal(csr.Status.Certificate, t.Status.AuthParams.SignedCRT) {
		return true
	}
	cert, ok := certFor(csr.Status.Certificate, clientKey)
	return !ok || !r.Now.now().Before(cert.NotAfter)
}

// renewing reports whether t's current certificate is for clientKey and
// still valid: its renewal is under way.
func (r *TenantReconciler) renewing(t *authv1beta1.Tenant, clientKey []byte) bool {
	if t.Status.AuthParams == nil {
		return false
	}
	cert, ok := certFor(t.Status.AuthParams.SignedCRT, clientKey)
	return ok && r.Now.now().Before(cert.NotAfter)
}

func (r *TenantReconciler) certLifetime() time.Duration {
	if r.CertLifetime > 0 {
		return max(r.CertLifetime, MinCertLifetime)
	}
	return DefaultCertLifetime
}

// issue asks the certificates API for the consumer's certificate and returns
// it once signed, or nil while the signer is still working.
func (r *TenantReconciler) issue(ctx context.Context, t *authv1beta1.Tenant, clientKey []byte) ([]byte, error) {
	csrs := r.Clientset.CertificatesV1().CertificateSigningRequests()
	name := csrName(string(t.Spec.ClusterID))
	csr, err := csrs.Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil && (string(csr.Spec.Request) != string(t.Spec.CSR) || r.spent(t, csr, clientKey)):
		// A request left from an earlier peering, or from the issuance of
		// the certificate being renewed: replace it.
		if err := csrs.Delete(ctx, name, metav1.DeleteOptions{}); client.IgnoreNotFound(err) != nil {
			return nil, err
		}
		return nil, fmt.Errorf("replaced stale CertificateSigningRequest %s", name)
	case err != nil && client.IgnoreNotFound(err) != nil:
		return nil, err
	case err != nil:
		csr = &certv1.CertificateSigningRequest{
			ObjectMeta: metav1.ObjectMeta{Name: name,
				Labels:      map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.RemoteClusterIDLabel: string(t.Spec.ClusterID)},
				Annotations: map[string]string{tenantAnnotation: t.Namespace + "/" + t.Name}},
			Spec: certv1.CertificateSigningRequestSpec{
				Request:           t.Spec.CSR,
				ExpirationSeconds: ptr.To(int32(r.certLifetime().Seconds())),
				SignerName:        certv1.KubeAPIServerClientSignerName,
				Usages:            []certv1.KeyUsage{certv1.UsageDigitalSignature, certv1.UsageClientAuth},
			},
		}
		if csr, err = csrs.Create(ctx, csr, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("creating CertificateSigningRequest %s: %w", name, err)
		}
	}
	if len(csr.Status.Certificate) > 0 {
		return csr.Status.Certificate, nil
	}
	if !isApproved(csr) {
		csr.Status.Conditions = append(csr.Status.Conditions, certv1.CertificateSigningRequestCondition{
			Type: certv1.CertificateApproved, Status: corev1.ConditionTrue,
			Reason: "LiqoTenantVerified", Message: "the consumer proved it owns the cluster key with a signed nonce",
		})
		if _, err := csrs.UpdateApproval(ctx, name, csr, metav1.UpdateOptions{}); err != nil {
			return nil, fmt.Errorf("approving CertificateSigningRequest %s: %w", name, err)
		}
	}
	return nil, nil
}

func isApproved(csr *certv1.CertificateSigningRequest) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == certv1.CertificateApproved || c.Type == certv1.CertificateDenied {
			return true
		}
	}
	return false
}

func (r *TenantReconciler) ensureRoleBinding(ctx context.Context, t *authv1beta1.Tenant, user string) error {
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "liqo-consumer-controlplane", Namespace: t.Namespace}}
	_, err := controllerutil.CreateOrUpdate(ctx, r.Client, rb, func() error {
		rb.Labels = map[string]string{consts.ManagedByLabel: consts.ManagedByValue}
		rb.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: r.ClusterRole}
		rb.Subjects = []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
		return controllerutil.SetControllerReference(t, rb, r.Client.Scheme())
	})
	return err
}

func (r *TenantReconciler) setReady(ctx context.Context, t *authv1beta1.Tenant, ok bool, reason, msg string) error {
	return r.setReadyFrom(ctx, t, t.DeepCopy(), ok, reason, msg)
}

// setReadyFrom sets the Ready condition, with an Event when it changes
// (but for the wait on the signer, which is no news), and writes the
// status changed since before.
func (r *TenantReconciler) setReadyFrom(ctx context.Context, t, before *authv1beta1.Tenant, ok bool, reason, msg string) error {
	changed := kit.SetCondition(&t.Status.Conditions, t.Generation, kit.Condition{Type: authv1beta1.ReadyCondition, OK: ok, Reason: reason, Message: msg})
	if changed && r.Recorder != nil && reason != "CertificatePending" {
		eventType := corev1.EventTypeNormal
		if !ok {
			eventType = corev1.EventTypeWarning
		}
		r.Recorder.Event(t, eventType, reason, msg)
	}
	return kit.PatchStatus(ctx, r.Client, t, before)
}

// SetupWithManager registers the controller; signed CertificateSigningRequests
// requeue their Tenant.
func (r *TenantReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorderFor("liqo-tenant")
	}
	b := ctrl.NewControllerManagedBy(mgr).Named("tenant")
	if r.Budget != nil {
		b = b.WatchesRawSource(r.budgetChanges())
	}
	return b.For(&authv1beta1.Tenant{}).
		Owns(&rbacv1.RoleBinding{}).
		Watches(&certv1.CertificateSigningRequest{}, handler.EnqueueRequestsFromMapFunc(
			func(_ context.Context, o client.Object) []reconcile.Request {
				ns, name, ok := splitKey(o.GetAnnotations()[tenantAnnotation])
				if !ok {
					return nil
				}
				return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
			})).
		Complete(r)
}
