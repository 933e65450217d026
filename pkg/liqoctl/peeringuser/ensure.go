package peeringuser

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kwait "k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
	pu "github.com/liqo-go/liqo/pkg/peeringuser"
	"github.com/liqo-go/liqo/pkg/wait"
)

// User is a peering user ready to be handed out.
type User struct {
	// Name is the ServiceAccount's, User the label value.
	Name, User string
	// Consumer is the cluster ID the user is bound to; empty for a generic
	// user nobody has claimed yet.
	Consumer string
	// ClusterID is the provider's.
	ClusterID string
	// ServerURL is the provider's API server as peers reach it.
	ServerURL string
	Token     pu.Token
	// Namespace is the provider's Liqo namespace.
	Namespace string
	// Reused tells that the user existed already.
	Reused bool
}

// Kubeconfig is the user's kubeconfig.
func (u *User) Kubeconfig() ([]byte, error) {
	return u.Token.Kubeconfig(u.ServerURL, "", u.ClusterID, u.Name, u.Namespace)
}

// EnsureOptions are Ensure's inputs.
type EnsureOptions struct {
	// Consumer is the consumer's cluster ID; empty asks for a generic user
	// (an unclaimed one is reused).
	Consumer string
	// APIServerURL overrides the URL peers reach the API server at.
	APIServerURL string
	// Timeout bounds the waits for the token and the policy.
	Timeout time.Duration
	Out     *output.Printer
}

// Ensure creates, or completes and reuses, a peering user on the cluster c
// (connected, the provider) and returns it with its token.
func Ensure(ctx context.Context, c *factory.Cluster, o EnsureOptions) (*User, error) {
	if o.Consumer != "" {
		if err := consts.ValidateClusterID(o.Consumer); err != nil {
			return nil, fmt.Errorf("--consumer-cluster-id: %w", err)
		}
	}
	info, err := c.FindComponents(ctx)
	if err != nil {
		return nil, err
	}
	if o.Consumer == info.ID {
		return nil, fmt.Errorf("--consumer-cluster-id %q is this cluster's own ID: a cluster cannot peer with itself", o.Consumer)
	}
	serverURL, from, err := ServerURL(ctx, c, o.APIServerURL)
	if err != nil {
		return nil, err
	}
	if err := ensurePolicy(ctx, c); err != nil {
		return nil, err
	}
	s, reused, err := pickUser(ctx, c, o.Consumer)
	if err != nil {
		return nil, err
	}
	if err := apply(ctx, c, s); err != nil {
		return nil, err
	}
	if reused {
		o.Out.Info("Peering user %s/%s reused", c.Namespace, Name(s.user))
	} else {
		o.Out.Info("Peering user %s/%s created", c.Namespace, Name(s.user))
	}
	wctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	secret := s.tokenSecret()
	if err := wait.For(wctx, c.Client, client.ObjectKeyFromObject(secret), secret, "the token controller to fill "+secret.Name,
		func(s *corev1.Secret) error {
			if len(s.Data[corev1.ServiceAccountTokenKey]) == 0 {
				return wait.NotYet("no token yet")
			}
			return nil
		}); err != nil {
		return nil, err
	}
	if err := probePolicy(wctx, c, s); err != nil {
		return nil, err
	}
	ca, err := ClusterCA(c, secret.Data[corev1.ServiceAccountRootCAKey])
	if err != nil {
		return nil, err
	}
	switch err := pu.VerifyServer(ctx, serverURL, ca, 5*time.Second); {
	case errors.Is(err, pu.ErrUntrustedServer):
		return nil, fmt.Errorf("the API server URL (%s, from %s) does not verify with the cluster's CA: %w; pass the URL peers reach it at with --api-server-url", serverURL, from, err)
	case err != nil:
		o.Out.Warn("cannot check the API server URL %s (from %s) from here: %v", serverURL, from, err)
	}
	return &User{Name: Name(s.user), User: s.user, Consumer: s.consumer, ClusterID: info.ID, ServerURL: serverURL,
		Token: pu.Token{CA: ca, Bearer: string(secret.Data[corev1.ServiceAccountTokenKey])}, Namespace: c.Namespace, Reused: reused}, nil
}

// ensurePolicy applies the policy and its binding.
func ensurePolicy(ctx context.Context, c *factory.Cluster) error {
	policy, binding := Policy(c.Namespace)
	for _, obj := range []client.Object{policy, binding} {
		if err := c.Client.Patch(ctx, obj, client.Apply, client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
			if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
				return fmt.Errorf("this cluster does not serve ValidatingAdmissionPolicies (Kubernetes 1.30 or later), which limit what peering users may do: %w", err)
			}
			return fmt.Errorf("applying %T %s: %w", obj, obj.GetName(), err)
		}
	}
	return nil
}

// pickUser names the user to ensure: the consumer's if known (refusing a
// name a generic user claimed by another cluster holds), else an
// unclaimed generic one, else a new generic one.
func pickUser(ctx context.Context, c *factory.Cluster, consumer string) (spec, bool, error) {
	s := spec{namespace: c.Namespace, consumer: consumer}
	if consumer != "" {
		s.user = consumer
		var cm corev1.ConfigMap
		err := c.Client.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: Name(consumer)}, &cm)
		switch {
		case apierrors.IsNotFound(err):
			return s, false, nil
		case err != nil:
			return s, false, err
		case cm.Data[ClaimKey] != consumer:
			return s, false, fmt.Errorf("ConfigMap %s/%s belongs to a peering user that is not bound to %q (claim %q): delete it first",
				c.Namespace, cm.Name, consumer, cm.Data[ClaimKey])
		}
		return s, true, nil
	}
	claims, err := listClaims(ctx, c.Client, c.Namespace)
	if err != nil {
		return s, false, err
	}
	for _, cm := range claims {
		if u, _ := userOf(cm.Name); strings.HasPrefix(u, genericPrefix) && cm.Data[ClaimKey] == "" {
			s.user = u
			return s, true, nil
		}
	}
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		return s, false, err
	}
	s.user = genericPrefix + hex.EncodeToString(b)
	return s, false, nil
}

// listClaims returns the claim ConfigMaps in namespace, sorted by name.
func listClaims(ctx context.Context, c client.Client, namespace string) ([]corev1.ConfigMap, error) {
	var list corev1.ConfigMapList
	if err := c.List(ctx, &list, client.InNamespace(namespace), client.HasLabels{Label}); err != nil {
		return nil, fmt.Errorf("listing the peering users' ConfigMaps in %s: %w", namespace, err)
	}
	slices.SortFunc(list.Items, func(a, b corev1.ConfigMap) int { return strings.Compare(a.Name, b.Name) })
	return list.Items, nil
}

// apply creates or updates the user's objects; the claim is only ever
// created.
func apply(ctx context.Context, c *factory.Cluster, s spec) error {
	if err := c.Client.Create(ctx, s.claim()); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the claim ConfigMap: %w", err)
	}
	generic := s.consumer == ""
	objs := []client.Object{s.serviceAccount(), s.tokenSecret(), s.installRole(generic), s.installRoleBinding(), s.tenantClusterRole()}
	if generic {
		objs = append(objs, s.claimClusterRole(), s.claimClusterRoleBinding())
	} else {
		ns := consts.TenantNamespace(s.consumer)
		if err := ensureTenantNamespace(ctx, c.Client, ns, s); err != nil {
			return err
		}
		objs = append(objs, s.tenantRoleBinding(ns))
	}
	for _, obj := range objs {
		if err := c.Client.Patch(ctx, obj, client.Apply, client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %T %s: %w", obj, obj.GetName(), err)
		}
	}
	return nil
}

// ensureTenantNamespace creates the bound user's tenant namespace, or adds
// the labels to the one an earlier peering left.
func ensureTenantNamespace(ctx context.Context, c client.Client, name string, s spec) error {
	ns := &corev1.Namespace{}
	err := c.Get(ctx, types.NamespacedName{Name: name}, ns)
	if apierrors.IsNotFound(err) {
		ns = &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: TenantNamespaceLabels(s.consumer, s.user)}}
		return client.IgnoreAlreadyExists(c.Create(ctx, ns))
	}
	if err != nil {
		return err
	}
	if !ns.DeletionTimestamp.IsZero() {
		return fmt.Errorf("namespace %s is being deleted (an unpeer is in progress); retry when it is gone", name)
	}
	patch := client.MergeFrom(ns.DeepCopy())
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	for k, v := range TenantNamespaceLabels(s.consumer, s.user) {
		ns.Labels[k] = v
	}
	return c.Patch(ctx, ns, patch)
}

var errAdmitted = errors.New("a request the policy refuses was admitted")

// probePolicy checks, as the user (impersonated, dry run), that the API
// server enforces the policy for it before its token is handed out: the
// policy and the user's parameter reach the admission plugin through
// informers, a moment after they are written. A generic user may create
// namespaces, so until then it could create any.
func probePolicy(ctx context.Context, c *factory.Cluster, s spec) error {
	cfg := rest.CopyConfig(c.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: serviceAccountUser(s.namespace, s.user),
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + s.namespace, "system:authenticated"}}
	as, err := client.New(cfg, client.Options{Scheme: apis.NewScheme()})
	if err != nil {
		return err
	}
	// Refused by the policy only: RBAC lets the user create both.
	probe := func() client.Object {
		if s.consumer == "" {
			return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: consts.TenantNamespace("policy-probe")}}
		}
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "liqo-policy-probe", Namespace: consts.TenantNamespace(s.consumer)}}
	}
	var last error
	err = kwait.PollUntilContextCancel(ctx, wait.PollInterval*4, true, func(context.Context) (bool, error) {
		// The probe runs on ctx, as the caller's requests do: the poll's
		// context would cut a request short only to report ctx's end.
		err := as.Create(ctx, probe(), client.DryRunAll)
		switch {
		case err != nil && strings.Contains(err.Error(), PolicyMessage):
			return true, nil
		case err == nil:
			last = errAdmitted
		case apierrors.IsForbidden(err) && strings.Contains(err.Error(), "impersonate"):
			return false, fmt.Errorf("cannot check that the API server enforces the %s policy: you may not impersonate the peering user: %w", PolicyName, err)
		default:
			last = err
		}
		return false, nil
	})
	if err == nil || ctx.Err() == nil {
		return err
	}
	hint := ""
	if errors.Is(last, errAdmitted) {
		hint = "; if the " + PolicyName + " binding was ever deleted, kube-apiserver may have stopped its ConfigMap informer for admission policies for good (kubernetes/kubernetes#130887): restart the API server"
	}
	return fmt.Errorf("the API server does not enforce the ValidatingAdmissionPolicy %s for the peering user (%v)%s: its token is not handed out", PolicyName, last, hint)
}
