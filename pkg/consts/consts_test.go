package consts

import "testing"

func TestClusterIDOfTenantNamespace(t *testing.T) {
	cases := []struct {
		ns, id string
		ok     bool
	}{
		{TenantNamespace("milan"), "milan", true},
		{"liqo-tenant-", "", false},
		{"liqo", "", false},
		{"default", "", false},
	}
	for _, c := range cases {
		if id, ok := ClusterIDOfTenantNamespace(c.ns); id != c.id || ok != c.ok {
			t.Errorf("%q: got %q %v, want %q %v", c.ns, id, ok, c.id, c.ok)
		}
	}
}

func TestReservedNamespace(t *testing.T) {
	cases := []struct {
		ns       string
		reserved bool
	}{
		{"kube-system", true},
		{"kube-public", true},
		{"kube-node-lease", true},
		{"liqo", true},
		{"liqo-system", true}, // the Liqo namespace of this install
		{TenantNamespace("milan"), true},
		{StorageNamespace, true},
		// The user's guide offloads these.
		{"default", false},
		{"liqo-demo", false},
		{"kubeflow", false},
	}
	for _, c := range cases {
		if got := ReservedNamespace(c.ns, "liqo-system"); got != c.reserved {
			t.Errorf("%q: reserved %v, want %v", c.ns, got, c.reserved)
		}
	}
}
