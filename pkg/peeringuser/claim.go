package peeringuser

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kwait "k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/peering"
	"github.com/liqo-go/liqo/pkg/wait"
)

// Identity is the peering user a token authenticates as.
type Identity struct {
	// Namespace is the provider's Liqo namespace, where the user lives.
	Namespace string
	// Name is the ServiceAccount's, User its label value.
	Name, User string
}

// ErrNotPeeringUser is WhoAmI's answer for a token of someone else.
var ErrNotPeeringUser = errors.New("not a peering user")

// WhoAmI asks the provider's API server who the client is, and checks
// that it is a peering user.
func WhoAmI(ctx context.Context, cs kubernetes.Interface) (*Identity, error) {
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("asking the provider who the token is: %w", err)
	}
	name := r.Status.UserInfo.Username
	rest, ok := strings.CutPrefix(name, "system:serviceaccount:")
	ns, sa, ok2 := strings.Cut(rest, ":")
	user, ok3 := UserOf(sa)
	if !ok || !ok2 || !ok3 {
		return nil, fmt.Errorf("%w: the token authenticates %q on the provider, not a peering user (liqo-peer-*)", ErrNotPeeringUser, name)
	}
	return &Identity{Namespace: ns, Name: sa, User: user}, nil
}

// ErrClaimedElsewhere is Claim's refusal of a peering user bound, or
// claimed before, to another cluster.
var ErrClaimedElsewhere = errors.New("the peering user belongs to another cluster")

// Claim makes the peering user id usable by the consumer cluster
// consumer, through the provider's client c authenticated as the user:
//
//   - a generic user's claim is set to consumer (once: the policy refuses
//     a second), then the user creates the consumer's tenant namespace
//     and binds its ClusterRole there, and drops its rights to create
//     namespaces and bindings;
//   - a user bound, or claimed before, to another cluster is refused;
//   - a bound user finds its tenant namespace made by the provider's
//     admin.
func Claim(ctx context.Context, c client.Client, id *Identity, consumer string, p peering.Progress) error {
	key := types.NamespacedName{Namespace: id.Namespace, Name: id.Name}
	var cm corev1.ConfigMap
	for {
		if err := c.Get(ctx, key, &cm); err != nil {
			return fmt.Errorf("reading the peering user's claim %s on the provider (revoked?): %w", key, err)
		}
		claim := cm.Data[ClaimKey]
		if claim == consumer {
			break
		}
		if claim != "" {
			return fmt.Errorf("%w: this peer command was issued for cluster %q, and this cluster is %q: ask the provider's administrator for one of your own (liqoctl generate peer-command)", ErrClaimedElsewhere, claim, consumer)
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[ClaimKey] = consumer
		err := c.Update(ctx, &cm)
		if err == nil {
			p.Info("Peering user %s claimed for cluster %s", id.Name, consumer)
			break
		}
		if !apierrors.IsConflict(err) {
			return fmt.Errorf("claiming the peering user %s for cluster %s: %w", id.Name, consumer, err)
		}
	}
	ns := consts.TenantNamespace(consumer)
	err := c.Get(ctx, types.NamespacedName{Name: ns}, &corev1.Namespace{})
	switch {
	case err == nil:
	case apierrors.IsForbidden(err):
		// Not bound in it yet: a generic user sets itself up.
		if err := setUp(ctx, c, id, consumer); err != nil {
			return err
		}
		p.Info("Tenant namespace %s created on the provider", ns)
	default:
		return fmt.Errorf("reading the tenant namespace %s on the provider: %w", ns, err)
	}
	// The rights to create namespaces and bindings were for the above only.
	crb := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ClaimRoleName(id.User)}}
	if err := c.Delete(ctx, crb); err != nil && !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err) {
		return fmt.Errorf("dropping the peering user's claim rights: %w", err)
	}
	return nil
}

// setUp creates the tenant namespace and the RoleBinding of a claimed
// generic user, and waits until RBAC lets it read the namespace. The
// policy reads the claim from an informer: a refusal right after the
// claim is retried for a few seconds.
func setUp(ctx context.Context, c client.Client, id *Identity, consumer string) error {
	ns := consts.TenantNamespace(consumer)
	adviseBound := fmt.Sprintf("ask the provider's administrator for a command bound to this cluster: liqoctl generate peer-command --consumer-cluster-id %s", consumer)
	create := func(obj client.Object, what string) error {
		// The policy's refusal is retried for 15 s; the requests run on
		// ctx, the 15 s bound only when to stop retrying.
		var refused error
		err := kwait.PollUntilContextTimeout(ctx, wait.PollInterval*4, 15*time.Second, true, func(context.Context) (bool, error) {
			err := c.Create(ctx, obj)
			switch {
			case err == nil || apierrors.IsAlreadyExists(err):
				return true, nil
			case apierrors.IsForbidden(err) && strings.Contains(err.Error(), PolicyMessage):
				refused = err
				return false, nil
			case apierrors.IsForbidden(err):
				return false, fmt.Errorf("the peering user may not create %s (%w): it is bound to this cluster and the namespace was removed since; %s", what, err, adviseBound)
			default:
				return false, fmt.Errorf("creating %s on the provider: %w", what, err)
			}
		})
		switch {
		case err == nil || ctx.Err() != nil || !kwait.Interrupted(err):
			return err
		default:
			return fmt.Errorf("the provider refuses to let the peering user create %s (%w): the namespace exists already, made by an earlier peering; %s", what, refused, adviseBound)
		}
	}
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: TenantNamespaceLabels(consumer, id.User)}}
	if err := create(nsObj, "the tenant namespace "+ns); err != nil {
		return err
	}
	if err := create(TenantRoleBinding(id.User, id.Namespace, ns), "its RoleBinding in "+ns); err != nil {
		return err
	}
	var last error
	err := kwait.PollUntilContextTimeout(ctx, wait.PollInterval, 15*time.Second, true, func(ctx context.Context) (bool, error) {
		last = c.Get(ctx, types.NamespacedName{Name: ns}, &corev1.Namespace{})
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("the peering user still cannot read its tenant namespace %s: %w", ns, last)
	}
	return nil
}
