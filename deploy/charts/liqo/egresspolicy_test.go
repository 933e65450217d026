package chart

import (
	"net/netip"
	"slices"
	"testing"

	"github.com/spf13/pflag"

	"github.com/liqo-go/liqo/pkg/controllermanager/offloading"
)

// TestEgressPolicyValues: the twins' egress policy is on by default, and
// offloading.egressPolicy reaches the manager's flags.
func TestEgressPolicyValues(t *testing.T) {
	egress := func(vals map[string]any) offloading.EgressOptions {
		o := offloading.DefaultTwinOptions().Egress
		fs := pflag.NewFlagSet("liqo-controller-manager", pflag.ContinueOnError)
		fs.ParseErrorsAllowlist.UnknownFlags = true
		o.AddFlags(fs)
		if err := fs.Parse(managerDeployment(t, vals).Spec.Template.Spec.Containers[0].Args); err != nil {
			t.Fatal(err)
		}
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
		return o
	}
	if o := egress(map[string]any{}); o.Mode != offloading.EgressPolicyDefault || len(o.AllowedCIDRs) != 0 {
		t.Errorf("by default: %+v, want mode %s and no extra network", o, offloading.EgressPolicyDefault)
	}
	o := egress(map[string]any{"offloading": map[string]any{"egressPolicy": map[string]any{"mode": "off", "allowedCIDRs": []any{"169.254.20.10/32", "10.50.0.0/16"}}}})
	want := []netip.Prefix{netip.MustParsePrefix("169.254.20.10/32"), netip.MustParsePrefix("10.50.0.0/16")}
	if o.Mode != offloading.EgressPolicyOff || !slices.Equal(o.AllowedCIDRs, want) {
		t.Errorf("set: %+v, want mode off and %v", o, want)
	}
}
