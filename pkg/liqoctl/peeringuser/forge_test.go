package peeringuser

import (
	"regexp"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/consts"
)

// TestRightsNameTheConsumer: a bound user's rights name the consumer's
// objects wherever RBAC lets them (everything but create and list), but
// for its namespace (bound there only) and the ResourceSlices (unpeer
// deletes all of the consumer's); a generic user's cannot, and it gets the
// claim rights instead.
func TestRightsNameTheConsumer(t *testing.T) {
	bound := spec{user: "rome", namespace: "liqo", consumer: "rome"}
	for _, r := range bound.tenantClusterRole().Rules {
		byName := slices.ContainsFunc(r.Verbs, func(v string) bool { return v != "create" && v != "list" })
		if byName && len(r.ResourceNames) == 0 && !slices.Equal(r.Resources, []string{"namespaces"}) &&
			!slices.Equal(r.Resources, []string{"resourceslices"}) {
			t.Errorf("bound user: rule %v names no object", r)
		}
		if slices.Contains(r.Resources, "pods") || slices.Contains(r.Verbs, "*") || slices.Contains(r.Resources, "*") {
			t.Errorf("bound user: rule %v is too broad", r)
		}
	}
	generic := spec{user: "any-1234", namespace: "liqo"}
	for _, r := range generic.tenantClusterRole().Rules {
		if len(r.ResourceNames) != 0 {
			t.Errorf("generic user: rule %v names objects of an unknown consumer", r)
		}
	}
	if slices.ContainsFunc(bound.installRole(false).Rules, func(r rbacv1.PolicyRule) bool { return slices.Contains(r.Verbs, "update") }) {
		t.Error("a bound user may update its claim")
	}
	if !slices.ContainsFunc(generic.installRole(true).Rules, func(r rbacv1.PolicyRule) bool { return slices.Contains(r.Verbs, "update") }) {
		t.Error("a generic user may not set its claim")
	}
}

func TestObjectsAreLabelled(t *testing.T) {
	s := spec{user: "rome", namespace: "liqo", consumer: "rome"}
	for _, obj := range []client.Object{s.serviceAccount(), s.tokenSecret(), s.claim(), s.installRole(false), s.installRoleBinding(),
		s.tenantClusterRole(), s.tenantRoleBinding(consts.TenantNamespace("rome")), s.claimClusterRole(), s.claimClusterRoleBinding()} {
		l := obj.GetLabels()
		if l[consts.PartOfLabel] != consts.PartOfValue || l[Label] != "rome" {
			t.Errorf("%T %s: labels %v", obj, obj.GetName(), l)
		}
	}
	if got := TenantNamespaceLabels("rome", "rome"); got[Label] != "rome" || got[consts.TenantNamespaceLabel] != "true" ||
		got[consts.RemoteClusterIDLabel] != "rome" {
		t.Errorf("tenant namespace labels %v", got)
	}
}

func TestClusterIDPatternMatchesValidation(t *testing.T) {
	re := regexpMust(t, clusterIDPattern)
	for _, id := range []string{"rome", "a", "milan-2", "a-very-long-cluster-id-that-is-just-under-the-limit-x", "a-very-long-cluster-id-that-is-just-under-the-limit-xy", "Rome", "-rome", "rome-", "ro_me", ""} {
		if valid := consts.ValidateClusterID(id) == nil; re.MatchString(id) != valid {
			t.Errorf("%q: pattern says %v, ValidateClusterID says %v", id, re.MatchString(id), valid)
		}
	}
}

func regexpMust(t *testing.T, p string) *regexp.Regexp {
	t.Helper()
	re, err := regexp.Compile(p)
	if err != nil {
		t.Fatal(err)
	}
	return re
}
