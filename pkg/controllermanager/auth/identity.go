package auth

import (
	"context"
	"crypto/x509"
	"fmt"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/identity"
	"github.com/liqo-go/liqo/pkg/kit"
	"github.com/liqo-go/liqo/pkg/remotecluster"
)

// IdentityReconciler turns, on the consumer, an Identity issued by a provider
// into a kubeconfig Secret and checks that the provider accepts it.
type IdentityReconciler struct {
	Client    client.Client
	Keys      *identity.Keys
	ClusterID string
	Recorder  record.EventRecorder
	// Now is the reconciler's clock (time.Now if nil).
	Now clock
	// Remotes turns the kubeconfig into the provider's clients, kept until
	// the kubeconfig changes: each check does not build its own.
	Remotes *remotecluster.Registry
}

// Reconcile writes the kubeconfig Secret and sets the Ready condition from a
// SelfSubjectReview against the provider.
func (r *IdentityReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var id authv1beta1.Identity
	if err := r.Client.Get(ctx, req.NamespacedName, &id); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !id.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	before := id.DeepCopy()
	user := consts.ConsumerUser(r.ClusterID)
	kubeconfig, err := BuildKubeconfig(&id.Spec.AuthParams, r.Keys.Client, user)
	if err != nil {
		return ctrl.Result{}, r.setReady(ctx, &id, before, false, "InvalidAuthParams", err.Error())
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: consts.KubeconfigSecretName(id.Name), Namespace: id.Namespace}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, secret, func() error {
		secret.Labels = map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.RemoteClusterIDLabel: string(id.Spec.ClusterID)}
		secret.Data = map[string][]byte{consts.KubeconfigKey: kubeconfig}
		return controllerutil.SetControllerReference(&id, secret, r.Client.Scheme())
	}); err != nil {
		return ctrl.Result{}, err
	}
	id.Status.KubeconfigSecretRef = &corev1.LocalObjectReference{Name: secret.Name}
	remote, err := r.Remotes.ForSecret(ctx, string(id.Spec.ClusterID), client.ObjectKeyFromObject(secret))
	if err != nil {
		return ctrl.Result{}, err
	}

	if who, err := whoAmI(ctx, remote); err != nil {
		// The provider may be briefly unreachable; check again soon.
		return ctrl.Result{RequeueAfter: 10 * time.Second},
			r.setReady(ctx, &id, before, false, "ProviderRejected", fmt.Sprintf("the provider did not accept the credentials: %v", err))
	} else if who != user {
		return ctrl.Result{}, r.setReady(ctx, &id, before, false, "WrongUser",
			fmt.Sprintf("the provider knows these credentials as %q, expected %q", who, user))
	}
	next, err := r.pickUp(ctx, &id, remote)
	if err != nil {
		return ctrl.Result{}, err
	}
	msg := fmt.Sprintf("authenticated on %s as %s", id.Spec.AuthParams.APIServer, user)
	if p := id.Spec.AuthParams.ProxyURL; p != nil && *p != "" {
		msg += " through proxy " + *p
	}
	return ctrl.Result{RequeueAfter: next}, r.setReady(ctx, &id, before, true, "Authenticated", msg)
}

// pickUp takes, once the certificate is due for renewal, the renewed one
// from the consumer's Tenant on the provider (read with the current
// credentials) into the Identity, whose update writes the kubeconfig
// again. It returns when to look next: the provider renews at two thirds
// of the lifetime, the consumer looks a little later, then every minute
// until it finds the new certificate. A certificate from the provider is
// taken only if it is for this cluster's client key, another one, and
// lives at least as long as the current one.
func (r *IdentityReconciler) pickUp(ctx context.Context, id *authv1beta1.Identity, remote *remotecluster.Cluster) (time.Duration, error) {
	clientKey, err := x509.MarshalPKIXPublicKey(r.Keys.Client.Public())
	if err != nil {
		return 0, err
	}
	now := r.Now.now()
	cur, ok := certFor(id.Spec.AuthParams.SignedCRT, clientKey)
	if !ok {
		return 0, nil // refused above already: not ours to renew
	}
	if at := pickUpAt(cur); now.Before(at) || id.Spec.Namespace == nil {
		return until(now, at), nil
	}
	var t authv1beta1.Tenant
	if err := remote.Client.Get(ctx, types.NamespacedName{Namespace: *id.Spec.Namespace, Name: r.ClusterID}, &t); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "reading the Tenant for the renewed certificate, will retry")
		return time.Minute, nil
	}
	if t.Status.AuthParams == nil {
		return time.Minute, nil
	}
	renewed, ok := renewalOf(cur, t.Status.AuthParams.SignedCRT, clientKey, now)
	if !ok {
		return time.Minute, nil // not renewed yet
	}
	id.Spec.AuthParams.SignedCRT = t.Status.AuthParams.SignedCRT
	if err := r.Client.Update(ctx, id); err != nil {
		return 0, err
	}
	if r.Recorder != nil {
		r.Recorder.Eventf(id, corev1.EventTypeNormal, "CertificateRenewed", "renewed client certificate valid until %s", renewed.NotAfter.UTC().Format(time.RFC3339))
	}
	return until(now, pickUpAt(renewed)), nil
}

// whoAmI asks the provider who it takes the credentials for, within 5 s.
func whoAmI(ctx context.Context, remote *remotecluster.Cluster) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, whoAmITimeout)
	defer cancel()
	rev, err := remote.Clientset.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return rev.Status.UserInfo.Username, nil
}

// setReady sets the Ready condition, with an Event when it changes, and
// writes the status changed since before (the Identity as read).
func (r *IdentityReconciler) setReady(ctx context.Context, id, before *authv1beta1.Identity, ok bool, reason, msg string) error {
	changed := kit.SetCondition(&id.Status.Conditions, id.Generation, kit.Condition{Type: authv1beta1.ReadyCondition, OK: ok, Reason: reason, Message: msg})
	if changed && r.Recorder != nil {
		eventType := corev1.EventTypeNormal
		if !ok {
			eventType = corev1.EventTypeWarning
		}
		r.Recorder.Event(id, eventType, reason, msg)
	}
	return kit.PatchStatus(ctx, r.Client, id, before)
}

// SetupWithManager registers the controller.
func (r *IdentityReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorderFor("liqo-identity")
	}
	return ctrl.NewControllerManagedBy(mgr).Named("identity").
		For(&authv1beta1.Identity{}).
		Owns(&corev1.Secret{}).
		Complete(r)
}

// renewalOf is the certificate in certPEM if it renews cur: for the client
// key, another certificate, living at least as long, not expired at now.
// It comes from the provider's Tenant: anything else is refused.
func renewalOf(cur *x509.Certificate, certPEM, clientKey []byte, now time.Time) (*x509.Certificate, bool) {
	renewed, ok := certFor(certPEM, clientKey)
	if !ok || renewed.Equal(cur) || renewed.NotAfter.Before(cur.NotAfter) || now.After(renewed.NotAfter) {
		return nil, false
	}
	return renewed, true
}

// whoAmITimeout bounds the check of the credentials: a provider that does
// not answer is retried soon (see Reconcile).
const whoAmITimeout = 5 * time.Second
