package twinname

import (
	"path"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/liqo-go/liqo/pkg/consts"
)

// defaults are a default install's rules.
var defaults = Rules{Allowed: []string{"*"}, Reserved: DefaultReserved()}

// TestCheckDefaults: on a default install, EnforceSameName takes any free
// name but Kubernetes', Liqo's and the well-known software's; a consumer's
// own DefaultName twins pass, the seeds' liqo-demo included, and another
// tenant's do not.
func TestCheckDefaults(t *testing.T) {
	tenants := []string{"milan", "west-rome"}
	cases := []struct {
		name, want string // want: "" accepted, else a word of the refusal
	}{
		{"podinfo", ""},
		{"liqo-demo", ""},
		{"liqo-demo-rome", ""},
		{"kube-system-rome", ""},
		{"rome", ""},
		{"kube-system", "Kubernetes' and Liqo's"},
		{"kube-foo", "kube-*"},
		{"default", "default"},
		{"liqo", "reserved on every cluster"},
		{"liqo-foo", "liqo-*"},
		{"liqo-storage", "liqo-*"},
		{"liqo-tenant-x", "tenant namespaces"},
		{"liqo-tenant-x-rome", "tenant namespaces"},
		{"flux-system", `"*-system"`},
		{"istio-system", `"*-system"`},
		{"ingress-nginx", "--reserved-twin-namespaces"},
		{"monitoring", "--reserved-twin-namespaces"},
		{"istio-rome", `"istio-*"`}, // the provider's list binds the consumer's own names too
		{"app-milan", "cluster milan"},
		{"app-west-rome", "cluster west-rome"},
		{"Bad_Name", "DNS label"},
	}
	for _, c := range cases {
		r := defaults.Check("rome", c.name, tenants)
		switch {
		case c.want == "" && r != nil:
			t.Errorf("%s: refused (%s), want accepted", c.name, r.Message)
		case c.want != "" && (r == nil || !strings.Contains(r.Message, c.want) || !strings.Contains(r.Message, c.name)):
			t.Errorf("%s: %v, want a refusal naming it and saying %q", c.name, r, c.want)
		}
	}
	if r := defaults.Check("rome", "Bad_Name", nil); r == nil || !r.Invalid {
		t.Errorf("an invalid name: %+v, want Invalid", r)
	}
}

// TestCheckNarrowAllowList: a provider that lists the names it allows
// gets the strict rules back: the consumer's own names and the list.
func TestCheckNarrowAllowList(t *testing.T) {
	r := Rules{Allowed: []string{"team-*"}, Reserved: []string{"team-secret"}}
	for name, ok := range map[string]bool{"app-rome": true, "team-blue": true, "team-secret": false, "podinfo": false, "liqo-demo": false} {
		if got := r.Check("rome", name, nil); (got == nil) != ok {
			t.Errorf("%s: %v, want accepted %v", name, got, ok)
		}
	}
	if got := r.Check("rome", "podinfo", nil); got == nil || !strings.Contains(got.Message, "--allowed-twin-namespaces") {
		t.Errorf("podinfo: %v, want the allow-list named", got)
	}
}

// TestCheckID: the IDs the seeds show pass; those whose DefaultName twins
// would be well-known or reserved namespaces do not.
func TestCheckID(t *testing.T) {
	for _, id := range []string{"rome", "milan", "naples", "florence", "lyon", "new-york", "gslb-eu", "gslb-us", "aws-gpu-cluster",
		"lively-voice-dd8531", "4858caa2-7848-4aab-a6b4-6984389bac56", "cluster-name", "provider", "consumer", "west-rome"} {
		if err := CheckID(id, DefaultReserved()); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
	for id, want := range map[string]string{"system": "kube-system", "public": "kube-public", "lease": "kube-node-lease",
		"node-lease": "kube-node-lease", "storage": "liqo-storage", "nginx": "ingress-nginx", "manager": "cert-manager",
		"operator": "gpu-operator", "a-system": "*-system", "dns": "external-dns"} {
		err := CheckID(id, DefaultReserved())
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--cluster-name") {
			t.Errorf("%s: %v, want a refusal naming %s", id, err, want)
		}
	}
	if err := CheckID("payments", []string{"team-payments"}); err == nil {
		t.Error("payments: accepted, though the provider reserves team-payments")
	}
	if err := CheckID("payments", nil); err != nil {
		t.Errorf("payments without a list: %v", err)
	}
}

func TestValidatePatterns(t *testing.T) {
	if err := ValidatePatterns(DefaultReserved()); err != nil {
		t.Errorf("the default list: %v", err)
	}
	for _, p := range []string{"", "team-["} {
		if err := ValidatePatterns([]string{p}); err == nil {
			t.Errorf("%q accepted", p)
		}
	}
}

// FuzzCheck: whatever the consumer, name, tenants and provider lists, an
// accepted twin name is a DNS label, never a tenant namespace's name,
// never default or liqo, never a reserved literal, and a kube-* or liqo-*
// name (liqo-demo aside) or another tenant's suffix only when it is the
// consumer's own name by the longest suffix.
func FuzzCheck(f *testing.F) {
	f.Add("rome", "kube-system", "milan,west-rome", "*", "*-system,monitoring")
	f.Add("system", "istio-system", "", "*", "")
	f.Add("b", "x-a-b", "a-b", "*", "")
	f.Add("rome", "liqo-demo", "", "*", "liqo-demo")
	f.Add("rome", "team-x", "", "team-*", "[")
	f.Fuzz(func(t *testing.T, consumer, name, tenantList, allowed, reserved string) {
		split := func(s string) []string {
			if s == "" {
				return nil
			}
			return strings.Split(s, ",")
		}
		tenants := split(tenantList)
		r := Rules{Allowed: split(allowed), Reserved: split(reserved)}
		got := r.Check(consumer, name, tenants)
		if got != nil {
			if got.Message == "" {
				t.Fatal("a refusal without a message")
			}
			return
		}
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			t.Fatalf("accepted %q, not a DNS label", name)
		}
		if _, ok := consts.ClusterIDOfTenantNamespace(name); ok || name == "default" || name == "liqo" {
			t.Fatalf("accepted %q", name)
		}
		own := len(name) > len(consumer)+1 && strings.HasSuffix(name, "-"+consumer)
		if (strings.HasPrefix(name, "kube-") || strings.HasPrefix(name, "liqo-") && name != Example) && !own {
			t.Fatalf("accepted %q for %q", name, consumer)
		}
		for _, p := range r.Reserved {
			if ok, err := path.Match(p, name); ok && err == nil {
				t.Fatalf("accepted %q, reserved by %q", name, p)
			}
		}
		for _, id := range tenants {
			if len(name) > len(id)+1 && strings.HasSuffix(name, "-"+id) && (!own || len(id) > len(consumer)) {
				t.Fatalf("accepted %q for %q, a name of tenant %q", name, consumer, id)
			}
		}
	})
}

// FuzzCheckID: an accepted consumer ID is never the tail of a well-known
// or reserved literal name, and no name "<x>-<id>" matches a reserved
// suffix pattern ("*-system").
func FuzzCheckID(f *testing.F) {
	f.Add("system", "x", "*-system")
	f.Add("a-system", "x", "*-system")
	f.Add("nginx", "ingress", "ingress-nginx")
	f.Add("b", "a", "*-a-b,team-*")
	f.Fuzz(func(t *testing.T, id, x, reservedList string) {
		var reserved []string
		if reservedList != "" {
			reserved = strings.Split(reservedList, ",")
		}
		if CheckID(id, reserved) != nil || id == "" || x == "" {
			return
		}
		name := x + "-" + id
		for _, p := range append(append([]string{}, wellKnown...), reserved...) {
			literal := !strings.ContainsAny(p, `*?[]\`)
			suffix := strings.HasPrefix(p, "*") && !strings.ContainsAny(p[1:], `*?[]\`)
			if literal && p == name {
				t.Fatalf("accepted id %q, whose twin of %q is %q", id, x, p)
			}
			if ok, _ := path.Match(p, name); ok && suffix {
				t.Fatalf("accepted id %q, whose twin %q matches %q", id, name, p)
			}
		}
	})
}
