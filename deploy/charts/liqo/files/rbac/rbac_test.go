package rbac_test

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/liqo-go/liqo/deploy/charts/liqo/files/rbac"
	"github.com/liqo-go/liqo/pkg/controllermanager"
	"github.com/liqo-go/liqo/pkg/controllermanager/gateway"
)

func TestClusterRoles(t *testing.T) {
	all, err := rbac.ClusterRoles()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range all {
		names = append(names, r.Name)
		if len(r.Rules) == 0 {
			t.Errorf("ClusterRole %s has no rules", r.Name)
		}
	}
	want := []string{"liqo-controller-manager", gateway.GatewayClusterRole, gateway.GatewayNodesClusterRole,
		controllermanager.ConsumerClusterRole, controllermanager.OffloadingClusterRole}
	if !slices.Equal(names, want) {
		t.Errorf("ClusterRoles() = %v, want %v", names, want)
	}
	if _, err := rbac.ClusterRole("liqo-nothing"); err == nil {
		t.Error("ClusterRole of an unknown name: no error")
	}
}

// TestNoWildcards keeps the generated roles explicit: a "*" grants what
// later API versions add too.
func TestNoWildcards(t *testing.T) {
	all, err := rbac.ClusterRoles()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range all {
		for _, rule := range r.Rules {
			for _, list := range [][]string{rule.APIGroups, rule.Resources, rule.Verbs} {
				if slices.Contains(list, rbacv1.ResourceAll) {
					t.Errorf("ClusterRole %s: a wildcard in %+v", r.Name, rule)
				}
			}
		}
	}
}
