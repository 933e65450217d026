package peeringuser

import (
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/liqo-go/liqo/pkg/consts"
)

const (
	// Label marks every object of a peering user; its value is the user's
	// name without the liqo-peer- prefix: the consumer's cluster ID for a
	// user made with --consumer-cluster-id.
	Label = "liqo.io/peering-user"
	// ClaimKey is the claim ConfigMap's key holding the consumer's cluster
	// ID, empty until a generic user is claimed.
	ClaimKey = "consumerClusterID"
	// PolicyMessage starts every refusal of the peering users' admission
	// policy, so that the consumer and the tests can tell it from RBAC's.
	PolicyMessage = "liqo peering user: "

	namePrefix = "liqo-peer-"
)

// Name is the name of the ServiceAccount, claim ConfigMap, Role,
// ClusterRole and bindings of the peering user user.
func Name(user string) string { return namePrefix + user }

// UserOf is the inverse of Name.
func UserOf(name string) (string, bool) {
	u, ok := strings.CutPrefix(name, namePrefix)
	return u, ok && u != ""
}

// ClaimRoleName names the ClusterRole and ClusterRoleBinding by which a
// generic user sets itself up once claimed.
func ClaimRoleName(user string) string { return Name(user) + "-claim" }

// TenantNamespaceLabels are the labels of the tenant namespace of consumer
// on the provider as a peering user holds it: those EnsureTenantNamespace
// puts, so that a peering finds nothing to change, and the user's.
func TenantNamespaceLabels(consumer, user string) map[string]string {
	return map[string]string{
		consts.TenantNamespaceLabel: "true", consts.RemoteClusterIDLabel: consumer,
		consts.ManagedByLabel: consts.ManagedByValue, consts.PartOfLabel: consts.PartOfValue, Label: user,
	}
}

// TenantRoleBinding binds the ClusterRole of the peering user user (whose
// ServiceAccount lives in liqoNamespace) in the tenant namespace ns.
func TenantRoleBinding(user, liqoNamespace, ns string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "RoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: Name(user), Namespace: ns, Labels: map[string]string{consts.PartOfLabel: consts.PartOfValue, Label: user}},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: Name(user), Namespace: liqoNamespace}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: Name(user)}}
}
