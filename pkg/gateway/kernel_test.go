package gateway

import (
	"strings"
	"testing"

	"github.com/liqo-go/liqo/pkg/testbed/netns"
	"github.com/liqo-go/liqo/pkg/testbed/netnstest"
)

// TestLooseReversePath: the gateway cannot change the namespace-wide
// reverse-path filter it inherits; strict filtering, which drops the
// tunnel's traffic, is refused with an error naming the setting, loose and
// none are fine.
func TestLooseReversePath(t *testing.T) {
	ns := netnstest.New(t, "lqrpf")
	for _, tc := range []struct {
		value   string
		refused bool
	}{{"1", true}, {"2", false}, {"0", false}} {
		if err := netns.Sysctl(ns, "ipv4/conf/all/rp_filter", tc.value); err != nil {
			t.Fatal(err)
		}
		err := netns.Do(ns, looseReversePath)
		if refused := err != nil; refused != tc.refused || refused && !strings.Contains(err.Error(), "net.ipv4.conf.all.rp_filter is 1") {
			t.Errorf("rp_filter %s: err = %v, want refused %v naming the setting", tc.value, err, tc.refused)
		}
	}
}
