package peeringuser

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	ipamv1alpha1 "github.com/liqo-go/liqo/apis/ipam/v1alpha1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	pu "github.com/liqo-go/liqo/pkg/peeringuser"
)

const (
	// Label marks every object of a peering user (pkg/peeringuser's,
	// which the consumer's Claim shares).
	Label = pu.Label
	// ClaimKey is the claim ConfigMap's key holding the consumer's cluster
	// ID, empty until a generic user is claimed.
	ClaimKey = pu.ClaimKey
	// FieldOwner is liqoctl's field manager for what it applies.
	FieldOwner = "liqoctl"

	// genericPrefix starts the names of generic users: a cluster ID could
	// take the same form, which Ensure detects by the claim.
	genericPrefix = "any-"

	// publicKeys is the PublicKey CRD's plural, as generated.
	publicKeys = "publickeies"
)

// Name is the name of the ServiceAccount, claim ConfigMap, Role,
// ClusterRole and bindings of the peering user user.
func Name(user string) string { return pu.Name(user) }

func userOf(name string) (string, bool)  { return pu.UserOf(name) }
func tokenSecretName(user string) string { return Name(user) + "-token" }
func claimRoleName(user string) string   { return pu.ClaimRoleName(user) }

// serviceAccountUser is the user name the API server gives the peering
// user's token.
func serviceAccountUser(namespace, user string) string {
	return "system:serviceaccount:" + namespace + ":" + Name(user)
}

// spec says which peering user the forge functions build the objects of.
type spec struct {
	// user is the label value, Name(user) the objects' name.
	user string
	// namespace is the provider's Liqo namespace.
	namespace string
	// consumer is the consumer's cluster ID, known for a bound user; empty
	// for a generic one, whose rights name no object of the consumer.
	consumer string
}

func (s spec) meta(namespace string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: Name(s.user), Namespace: namespace, Labels: s.labels()}
}

func (s spec) labels() map[string]string {
	return map[string]string{consts.PartOfLabel: consts.PartOfValue, Label: s.user}
}

func (s spec) serviceAccount() *corev1.ServiceAccount {
	return &corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: s.meta(s.namespace)}
}

// tokenSecret asks the token controller for a token that lives until the
// Secret is deleted.
func (s spec) tokenSecret() *corev1.Secret {
	m := s.meta(s.namespace)
	m.Name = tokenSecretName(s.user)
	m.Annotations = map[string]string{corev1.ServiceAccountNameKey: Name(s.user)}
	return &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: m,
		Type: corev1.SecretTypeServiceAccountToken}
}

// claim is created once and never updated by liqoctl: a generic user's
// claim is the consumer's to set.
func (s spec) claim() *corev1.ConfigMap {
	return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: s.meta(s.namespace),
		Data: map[string]string{ClaimKey: s.consumer}}
}

// installRole is what peer and unpeer read in the Liqo namespace: the
// cluster's identity and liveness (FindComponents), the networks the
// fabric exchanges, the claim. Namespaces get applies to the namespace
// itself only, since the Role lives in it.
func (s spec) installRole(generic bool) *rbacv1.Role {
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"},
			ResourceNames: []string{consts.ClusterIDConfigMap, Name(s.user)}},
		{APIGroups: []string{coordinationv1.GroupName}, Resources: []string{"leases"}, Verbs: []string{"get"},
			ResourceNames: []string{consts.ControllerManagerLease}},
		{APIGroups: []string{ipamv1alpha1.GroupVersion.Group}, Resources: []string{"networks"}, Verbs: []string{"get"},
			ResourceNames: []string{"pod-cidr", ipamv1alpha1.ExternalNetworkName}},
	}
	if generic {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"configmaps"},
			Verbs: []string{"update"}, ResourceNames: []string{Name(s.user)}})
	}
	return &rbacv1.Role{TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "Role"},
		ObjectMeta: s.meta(s.namespace), Rules: rules}
}

func (s spec) subjects() []rbacv1.Subject {
	return []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: Name(s.user), Namespace: s.namespace}}
}

func (s spec) installRoleBinding() *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
		ObjectMeta: s.meta(s.namespace), Subjects: s.subjects(),
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: Name(s.user)}}
}

// names returns list for a bound user, nil (any name) for a generic one.
func (s spec) names(list ...string) []string {
	if s.consumer == "" {
		return nil
	}
	return list
}

// tenantClusterRole is what peer and unpeer do in the consumer's tenant
// namespace. It is a ClusterRole so that a generic user can bind it in a
// namespace that does not exist yet, but it is only ever bound by a
// RoleBinding in that namespace. The verbs are what
// controllerutil.CreateOrUpdate, the waits and unpeer use; create and list
// cannot be limited by name, the others are for a bound user. A generic
// user's cannot name the consumer's objects: it reaches any of them in its
// own tenant namespace, Secrets included (the policy keeps it from writing
// their data), but nothing outside it.
func (s spec) tenantClusterRole() *rbacv1.ClusterRole {
	auth, net := authv1beta1.GroupVersion.Group, netv1beta1.GroupVersion.Group
	peer := s.names(s.consumer)
	rules := []rbacv1.PolicyRule{
		// The tenant namespace itself (EnsureTenantNamespace, unpeer).
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get"}},
		// The nonce Secret (created empty: the policy checks it).
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "update", "delete"},
			ResourceNames: s.names(consts.NonceSecret)},
		{APIGroups: []string{auth}, Resources: []string{"tenants"}, Verbs: []string{"create", "list"}},
		{APIGroups: []string{auth}, Resources: []string{"tenants"}, Verbs: []string{"get", "update", "delete"}, ResourceNames: peer},
		{APIGroups: []string{auth}, Resources: []string{"identities"}, Verbs: []string{"list"}},
		{APIGroups: []string{auth}, Resources: []string{"resourceslices"}, Verbs: []string{"list", "delete"}},
		{APIGroups: []string{net}, Resources: []string{"configurations", "gatewayservers", publicKeys}, Verbs: []string{"create"}},
		{APIGroups: []string{net}, Resources: []string{"configurations", "gatewayservers", publicKeys}, Verbs: []string{"get", "update"}, ResourceNames: peer},
		{APIGroups: []string{net}, Resources: []string{"gatewayclients", "connections"}, Verbs: []string{"get"}, ResourceNames: peer},
	}
	if s.consumer != "" {
		// With networking, the gateway server's key Secret, whose public
		// key liqoctl gives the consumer's gateway. It is the key of this
		// consumer's tunnel only.
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"},
			ResourceNames: []string{consts.GatewayResourceName(s.consumer)}})
	}
	return &rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
		ObjectMeta: s.meta(""), Rules: rules}
}

// tenantRoleBinding binds tenantClusterRole in the tenant namespace ns.
func (s spec) tenantRoleBinding(ns string) *rbacv1.RoleBinding {
	return pu.TenantRoleBinding(s.user, s.namespace, ns)
}

// claimClusterRole lets a generic user set itself up once claimed:
// create a namespace and a RoleBinding (which the policy limits to its
// claimed tenant namespace and to binding tenantClusterRole to itself),
// and then drop these rights by deleting its own ClusterRoleBinding.
func (s spec) claimClusterRole() *rbacv1.ClusterRole {
	m := s.meta("")
	m.Name = claimRoleName(s.user)
	return &rbacv1.ClusterRole{TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
		ObjectMeta: m, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"create"}},
			{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"rolebindings"}, Verbs: []string{"create"}},
			{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, Verbs: []string{"bind"}, ResourceNames: []string{Name(s.user)}},
			{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterrolebindings"}, Verbs: []string{"delete"}, ResourceNames: []string{claimRoleName(s.user)}},
		}}
}

func (s spec) claimClusterRoleBinding() *rbacv1.ClusterRoleBinding {
	m := s.meta("")
	m.Name = claimRoleName(s.user)
	return &rbacv1.ClusterRoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
		ObjectMeta: m, Subjects: s.subjects(),
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: claimRoleName(s.user)}}
}

// TenantNamespaceLabels are the labels of the tenant namespace of consumer
// on the provider as a peering user holds it (pkg/peeringuser's).
func TenantNamespaceLabels(consumer, user string) map[string]string {
	return pu.TenantNamespaceLabels(consumer, user)
}
