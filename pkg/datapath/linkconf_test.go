package datapath

import (
	"fmt"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/liqo-go/liqo/pkg/testbed/netns"
	"github.com/liqo-go/liqo/pkg/testbed/netnstest"
)

// TestSetLinkConf: settings written over netlink are the link's own, as
// /proc/sys shows them, and leave the namespace-wide ones ("all") alone.
// The link starts with the opposite values (written through /proc/sys),
// so each one read back was changed by SetLinkConf.
func TestSetLinkConf(t *testing.T) {
	ns := netnstest.New(t, "lqconf")
	const link = "conf0"
	for key, v := range map[string]string{"ipv4/conf/all/forwarding": "0", "ipv4/conf/default/rp_filter": "1"} {
		if err := netns.Sysctl(ns, key, v); err != nil {
			t.Fatal(err)
		}
	}
	want := map[LinkConf]uint32{Forwarding: 1, RPFilter: 0, AcceptLocal: 1}
	if err := netns.Do(ns, func() error {
		if err := netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: link}, PeerName: link + "p"}); err != nil {
			return err
		}
		l, err := netlink.LinkByName(link)
		if err != nil {
			return err
		}
		if v, err := LinkConfOf(link, RPFilter); err != nil || v != 1 {
			return fmt.Errorf("a new link's rp_filter is %d (%v), want the default's 1", v, err)
		}
		if err := SetLinkConf(l, want); err != nil {
			return err
		}
		for c, w := range want {
			if v, err := LinkConfOf(link, c); err != nil || v != w {
				return fmt.Errorf("%s of %s is %d (%v), want %d", c.name(), link, v, err, w)
			}
		}
		if v, err := LinkConfOf("all", Forwarding); err != nil || v != 0 {
			return fmt.Errorf("all/forwarding is %d (%v), want 0: the link's setting is its own", v, err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
