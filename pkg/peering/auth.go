package peering

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/wait"
)

// The steps of the authentication, each on one cluster: liqoctl peer and
// authenticate run them all with access to both clusters, the manual
// commands (create nonce, generate tenant, generate identity) one at a
// time, the administrator of each cluster carrying the result across.
// Provider side: EnsureNonce, ApplyTenant, IdentityFor. Consumer side:
// SignNonce, ForgeTenant, ApplyIdentity.

// TenantOf names the tenant namespace of Peer on the cluster of Client
// (Role in messages).
type TenantOf struct {
	Client client.Client
	Peer   string
	Role   string
}

// EnsureTenantNamespaces is the step that ensures tenant namespaces, each
// on its cluster.
func EnsureTenantNamespaces(ctx context.Context, out Progress, namespaces ...TenantOf) error {
	out.Step("Ensuring tenant namespace")
	start := time.Now()
	for _, n := range namespaces {
		if err := EnsureTenantNamespace(ctx, n.Client, consts.TenantNamespace(n.Peer), n.Peer); err != nil {
			return fmt.Errorf("%s tenant namespace: %w", n.Role, err)
		}
	}
	out.Timed(start, "Tenant namespace correctly ensured")
	return nil
}

// EnsureNonce has the provider (c) issue a nonce for consumer and returns
// it: the nonce Secret in the consumer's tenant namespace is created, the
// provider's controller fills it. The namespace must exist.
func EnsureNonce(ctx context.Context, c client.Client, out Progress, consumer string) ([]byte, error) {
	out.Step("Ensuring nonce secret")
	start := time.Now()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: consts.NonceSecret, Namespace: consts.TenantNamespace(consumer)}}
	if _, err := Apply(ctx, c, s, func() error {
		s.Labels = ForgeNonceSecret(consumer).Labels
		return nil
	}); err != nil {
		return nil, fmt.Errorf("creating the nonce Secret on the provider: %w", err)
	}
	out.Timed(start, "Nonce secret ensured")

	out.Step("Waiting for nonce to be generated")
	start = time.Now()
	if err := wait.For(ctx, c, client.ObjectKeyFromObject(s), s, "the provider to generate the nonce",
		func(s *corev1.Secret) error {
			if len(s.Data[consts.NonceKey]) == 0 {
				return wait.NotYet("no nonce in %s/%s", s.Namespace, s.Name)
			}
			return nil
		}); err != nil {
		return nil, err
	}
	out.Timed(start, "Nonce generated successfully")
	return s.Data[consts.NonceKey], nil
}

// ForgeNonceSecret is the Secret, without its nonce, asking the provider's
// controller manager for a nonce for consumer: EnsureNonce creates it, and
// liqoctl create nonce -o prints it.
func ForgeNonceSecret(consumer string) *corev1.Secret {
	return &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{Name: consts.NonceSecret, Namespace: consts.TenantNamespace(consumer), Labels: nonceLabels(consts.NonceIssued, consumer)}}
}

// GetNonce returns the nonce the provider (c) issued for consumer, without
// creating one.
func GetNonce(ctx context.Context, c client.Client, consumer string) ([]byte, error) {
	var s corev1.Secret
	key := types.NamespacedName{Namespace: consts.TenantNamespace(consumer), Name: consts.NonceSecret}
	err := c.Get(ctx, key, &s)
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("no nonce for cluster %s here (no Secret %s): create it with liqoctl create nonce --remote-cluster-id %s", consumer, key, consumer)
	case err != nil:
		return nil, fmt.Errorf("reading the nonce Secret %s: %w", key, err)
	case len(s.Data[consts.NonceKey]) == 0:
		return nil, fmt.Errorf("the nonce Secret %s has no nonce yet: is the liqo controller manager running?", key)
	}
	return s.Data[consts.NonceKey], nil
}

// SignNonce has the consumer (c) sign nonce for provider and returns the
// Secret that holds the signature, the consumer's public key and its
// certificate request: the consumer's controller signs, with the key only
// it holds. The consumer's tenant namespace of provider must exist.
func SignNonce(ctx context.Context, c client.Client, out Progress, provider string, nonce []byte) (*corev1.Secret, error) {
	out.Step("Waiting for nonce to be signed")
	start := time.Now()
	signed := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: consts.SignedNonceSecret, Namespace: consts.TenantNamespace(provider)}}
	if _, err := Apply(ctx, c, signed, func() error {
		signed.Labels = nonceLabels(consts.NonceToSign, provider)
		if !bytes.Equal(signed.Data[consts.NonceKey], nonce) {
			signed.Data = map[string][]byte{consts.NonceKey: nonce}
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("creating the signed-nonce Secret on the consumer: %w", err)
	}
	if err := wait.For(ctx, c, client.ObjectKeyFromObject(signed), signed, "the local cluster to sign the nonce",
		func(s *corev1.Secret) error {
			if len(s.Data[consts.SignatureKey]) == 0 || !bytes.Equal(s.Data[consts.NonceKey], nonce) {
				return wait.NotYet("%s/%s is not signed", s.Namespace, s.Name)
			}
			return nil
		}); err != nil {
		return nil, err
	}
	out.Timed(start, "Nonce signed successfully")
	return signed, nil
}

func nonceLabels(kind, remoteID string) map[string]string {
	return map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.NonceSecretLabel: kind,
		consts.RemoteClusterIDLabel: remoteID}
}

// ForgeTenant is the Tenant by which consumer presents itself to a
// provider, from the Secret its controller signed (SignNonce): in the
// consumer's tenant namespace of the provider. It leaves the Tenant's
// condition out: a new Tenant is Active, and an existing one keeps what
// the provider's administrator set (cordoned stays cordoned). proxyURL,
// if not empty, is the proxy the consumer reaches the provider through,
// which ForgeIdentity carries into the consumer's Identity.
func ForgeTenant(consumer string, signed *corev1.Secret, proxyURL string) *authv1beta1.Tenant {
	t := &authv1beta1.Tenant{
		TypeMeta: metav1.TypeMeta{APIVersion: authv1beta1.GroupVersion.String(), Kind: "Tenant"},
		ObjectMeta: metav1.ObjectMeta{Name: consumer, Namespace: consts.TenantNamespace(consumer),
			Labels: map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.RemoteClusterIDLabel: consumer}},
		Spec: authv1beta1.TenantSpec{
			ClusterID:   corev1beta1.ClusterID(consumer),
			AuthzPolicy: authv1beta1.KeysExchangePolicy,
			PublicKey:   signed.Data[consts.PublicKeyKey],
			CSR:         signed.Data[consts.CSRKey],
			Signature:   signed.Data[consts.SignatureKey],
		},
	}
	if proxyURL != "" {
		t.Spec.ProxyURL = &proxyURL
	}
	return t
}

// ApplyTenant creates or updates want on the provider (c) and waits until
// the provider authenticated it; it returns the Tenant with the
// credentials the provider issued in its status.
func ApplyTenant(ctx context.Context, c client.Client, out Progress, want *authv1beta1.Tenant) (*authv1beta1.Tenant, error) {
	out.Step("Creating Tenant on the provider")
	start := time.Now()
	t := &authv1beta1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: want.Name, Namespace: want.Namespace}}
	// The provider's controller writes the Tenant too (its finalizer, for
	// one): Apply tries again on a fresh read when they cross.
	if _, err := Apply(ctx, c, t, func() error {
		t.Labels = want.Labels
		cond := t.Spec.TenantCondition
		t.Spec = *want.Spec.DeepCopy()
		if t.Spec.TenantCondition == "" {
			t.Spec.TenantCondition = cond
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("creating the Tenant on the provider: %w", err)
	}
	if err := waitTenant(ctx, c, t); err != nil {
		return nil, err
	}
	out.Timed(start, "Tenant correctly created and authenticated")
	return t, nil
}

// ErrTenantRejected marks the provider's refusal of a Tenant.
var ErrTenantRejected = errors.New("the provider rejected the Tenant")

// waitTenant waits until the provider authenticated t (it is read again
// into t), or says why it rejected it.
func waitTenant(ctx context.Context, c client.Client, t *authv1beta1.Tenant) error {
	return wait.For(ctx, c, client.ObjectKeyFromObject(t), t, "the provider to authenticate the Tenant",
		func(t *authv1beta1.Tenant) error {
			cond := meta.FindStatusCondition(t.Status.Conditions, authv1beta1.ReadyCondition)
			switch {
			case cond != nil && cond.ObservedGeneration == t.Generation && cond.Status == metav1.ConditionTrue && t.Status.AuthParams != nil:
				return nil
			case cond != nil && cond.ObservedGeneration == t.Generation && cond.Reason == "AuthenticationFailed":
				return fmt.Errorf("%w: %s", ErrTenantRejected, cond.Message)
			case cond != nil:
				return wait.NotYet("%s", cond.Message)
			}
			return wait.NotYet("the provider has not processed the Tenant")
		})
}

// IdentityFor waits until the provider (c) authenticated the Tenant of
// consumer and returns the Identity the consumer applies to use the
// credentials it was issued (ForgeIdentity).
func IdentityFor(ctx context.Context, c client.Client, consumer, provider string) (*authv1beta1.Identity, error) {
	t := &authv1beta1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: consumer, Namespace: consts.TenantNamespace(consumer)}}
	switch err := c.Get(ctx, client.ObjectKeyFromObject(t), t); {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("no Tenant of cluster %s here (%s/%s): apply the one liqoctl generate tenant --remote-cluster-id %s printed on that cluster first",
			consumer, t.Namespace, t.Name, provider)
	case err != nil:
		return nil, fmt.Errorf("reading the Tenant of %s: %w", consumer, err)
	}
	if err := waitTenant(ctx, c, t); err != nil {
		return nil, err
	}
	return ForgeIdentity(t, provider), nil
}

// ForgeIdentity is the consumer's Identity for provider from the Tenant
// the provider authenticated: its credentials, and the namespace that
// holds the consumer's objects on the provider. It goes in the consumer's
// tenant namespace of the provider.
func ForgeIdentity(t *authv1beta1.Tenant, provider string) *authv1beta1.Identity {
	remoteNS := t.Namespace
	id := &authv1beta1.Identity{
		TypeMeta: metav1.TypeMeta{APIVersion: authv1beta1.GroupVersion.String(), Kind: "Identity"},
		ObjectMeta: metav1.ObjectMeta{Name: consts.IdentityName(provider), Namespace: consts.TenantNamespace(provider),
			Labels: map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.RemoteClusterIDLabel: provider}},
		Spec: authv1beta1.IdentitySpec{
			ClusterID:  corev1beta1.ClusterID(provider),
			Type:       authv1beta1.ControlPlaneIdentity,
			AuthParams: *t.Status.AuthParams.DeepCopy(),
			Namespace:  &remoteNS,
		},
	}
	// The proxy is the consumer's network, which it asked for in its
	// Tenant (liqoctl generate tenant --proxy-url), not the provider's say.
	id.Spec.AuthParams.ProxyURL = nil
	if p := t.Spec.ProxyURL; p != nil && *p != "" {
		id.Spec.AuthParams.ProxyURL = ptr.To(*p)
	}
	return id
}

// ApplyIdentity creates or updates want on the consumer (c) and waits
// until the provider accepts the credentials it holds.
func ApplyIdentity(ctx context.Context, c client.Client, out Progress, want *authv1beta1.Identity) error {
	out.Step("Creating Identity")
	start := time.Now()
	id := &authv1beta1.Identity{ObjectMeta: metav1.ObjectMeta{Name: want.Name, Namespace: want.Namespace}}
	if _, err := Apply(ctx, c, id, func() error {
		id.Labels = want.Labels
		id.Spec = *want.Spec.DeepCopy()
		return nil
	}); err != nil {
		return fmt.Errorf("creating the Identity on the consumer: %w", err)
	}
	if err := wait.For(ctx, c, client.ObjectKeyFromObject(id), id, "the Identity to be usable",
		func(id *authv1beta1.Identity) error {
			cond := meta.FindStatusCondition(id.Status.Conditions, authv1beta1.ReadyCondition)
			switch {
			case cond != nil && cond.ObservedGeneration == id.Generation && cond.Status == metav1.ConditionTrue:
				return nil
			case cond != nil:
				return wait.NotYet("%s", cond.Message)
			}
			return wait.NotYet("the Identity has not been processed")
		}); err != nil {
		return err
	}
	out.Timed(start, "Identity correctly created")
	return nil
}

// RemoveIdentity deletes, on the consumer (c), its Identity for provider
// and the nonce it signed: the consumer can no longer reach the provider.
func RemoveIdentity(ctx context.Context, c client.Client, provider string) error {
	ns := consts.TenantNamespace(provider)
	for _, obj := range []client.Object{
		&authv1beta1.Identity{ObjectMeta: metav1.ObjectMeta{Name: consts.IdentityName(provider), Namespace: ns}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: consts.SignedNonceSecret, Namespace: ns}},
	} {
		if err := client.IgnoreNotFound(c.Delete(ctx, obj)); err != nil {
			return fmt.Errorf("deleting %T %s/%s: %w", obj, ns, obj.GetName(), err)
		}
	}
	return nil
}

// RemoveTenant deletes, on the provider (c), the Tenant of consumer and the
// nonce issued for it (the consumer's certificate is no longer bound to a
// role), and returns what it could not remove.
func RemoveTenant(ctx context.Context, c client.Client, consumer string) []string {
	ns := consts.TenantNamespace(consumer)
	var left []string
	for _, obj := range []client.Object{
		&authv1beta1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: consumer, Namespace: ns}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: consts.NonceSecret, Namespace: ns}},
	} {
		if err := c.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
			left = append(left, fmt.Sprintf("%T %s/%s: %v", obj, ns, obj.GetName(), err))
		}
	}
	return left
}
