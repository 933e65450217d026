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
