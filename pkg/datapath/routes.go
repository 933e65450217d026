package datapath

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Route is one route of a policy-routing table: to Dst through Link,
// either straight (scope link) or via Hop on the link (onlink: the hop
// has no address of its own on the link).
type Route struct {
	Dst  netip.Prefix
	Link netlink.Link
	Hop  netip.Addr
}

// SyncTable makes table hold exactly routes.
func SyncTable(table int, routes []Route) error {
	cur, err := netlink.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Table: table}, netlink.RT_FILTER_TABLE)
	if err != nil {
		return fmt.Errorf("listing table %d: %w", table, err)
	}
	var want []netlink.Route
	for _, r := range routes {
		dst := netipToIPNet(r.Dst)
		nr := netlink.Route{Table: table, Dst: dst, LinkIndex: r.Link.Attrs().Index, Scope: unix.RT_SCOPE_LINK}
		if r.Hop.IsValid() {
			nr.Gw, nr.Scope, nr.Flags = r.Hop.AsSlice(), unix.RT_SCOPE_UNIVERSE, int(netlink.FLAG_ONLINK)
		}
		want = append(want, nr)
	}
	var errs []error
	for _, r := range want {
		if err := netlink.RouteReplace(&r); err != nil {
			errs = append(errs, fmt.Errorf("route to %s in table %d: %w", r.Dst, table, err))
		}
	}
	for _, c := range cur {
		if !slices.ContainsFunc(want, func(w netlink.Route) bool { return sameDst(c, w) }) {
			if err := netlink.RouteDel(&c); err != nil {
				errs = append(errs, fmt.Errorf("removing route to %s from table %d: %w", c.Dst, table, err))
			}
		}
	}
	return errors.Join(errs...)
}

func sameDst(a, b netlink.Route) bool {
	if a.Dst == nil || b.Dst == nil {
		return a.Dst == b.Dst
	}
	return a.Dst.String() == b.Dst.String()
}

// PolicyRule is a policy-routing rule sending what matches to Table: by input
// interface (IIF) or destination (Dst).
type PolicyRule struct {
	Priority int
	Table    int
	IIF      string
	Dst      netip.Prefix
}

func (r PolicyRule) netlink() *netlink.Rule {
	nr := netlink.NewRule()
	nr.Family, nr.Priority, nr.Table, nr.IifName = netlink.FAMILY_V4, r.Priority, r.Table, r.IIF
	if r.Dst.IsValid() {
		nr.Dst = netipToIPNet(r.Dst)
	}
	return nr
}

// SyncRules makes the rules pointing at tables be exactly rules.
func SyncRules(tables []int, rules []PolicyRule) error {
	cur, err := netlink.RuleList(netlink.FAMILY_V4)
	if err != nil {
		return err
	}
	var errs []error
	key := func(table, prio int, iif, dst string) string { return fmt.Sprint(table, "/", prio, "/", iif, "/", dst) }
	have := map[string]bool{}
	wanted := map[string]bool{}
	for _, r := range rules {
		dst := ""
		if r.Dst.IsValid() {
			dst = r.Dst.String()
		}
		wanted[key(r.Table, r.Priority, r.IIF, dst)] = true
	}
	for _, c := range cur {
		if !slices.Contains(tables, c.Table) {
			continue
		}
		dst := ""
		if c.Dst != nil {
			dst = c.Dst.String()
		}
		k := key(c.Table, c.Priority, c.IifName, dst)
		if wanted[k] && !have[k] {
			have[k] = true
			continue
		}
		if err := netlink.RuleDel(&c); err != nil {
			errs = append(errs, fmt.Errorf("removing rule %s: %w", k, err))
		}
	}
	for _, r := range rules {
		dst := ""
		if r.Dst.IsValid() {
			dst = r.Dst.String()
		}
		if have[key(r.Table, r.Priority, r.IIF, dst)] {
			continue
		}
		if err := netlink.RuleAdd(r.netlink()); err != nil {
			errs = append(errs, fmt.Errorf("adding rule to table %d: %w", r.Table, err))
		}
	}
	return errors.Join(errs...)
}

func netipToIPNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: p.Masked().Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), 32)}
}
