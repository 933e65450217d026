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
	// Mark, when not 0, matches packets with that firewall mark.
	Mark uint32
}

func (r PolicyRule) netlink() *netlink.Rule {
	nr := netlink.NewRule()
	nr.Family, nr.Priority, nr.Table, nr.IifName = netlink.FAMILY_V4, r.Priority, r.Table, r.IIF
	if r.Dst.IsValid() {
		nr.Dst = netipToIPNet(r.Dst)
	}
	if r.Mark != 0 {
		nr.Mark = r.Mark
	}
	return nr
}

// key identifies a rule by what SyncRules sets of it.
func (r PolicyRule) key() string {
	dst := ""
	if r.Dst.IsValid() {
		dst = r.Dst.String()
	}
	return fmt.Sprint(r.Table, "/", r.Priority, "/", r.IIF, "/", dst, "/", r.Mark)
}

// SyncRules makes the rules pointing at tables be exactly rules.
func SyncRules(tables []int, rules []PolicyRule) error {
	cur, err := netlink.RuleList(netlink.FAMILY_V4)
	if err != nil {
		return err
	}
	var errs []error
	have := map[string]bool{}
	wanted := map[string]bool{}
	for _, r := range rules {
		wanted[r.key()] = true
	}
	for _, c := range cur {
		if !slices.Contains(tables, c.Table) {
			continue
		}
		k := fromNetlink(c).key()
		if wanted[k] && !have[k] {
			have[k] = true
			continue
		}
		if err := netlink.RuleDel(&c); err != nil {
			errs = append(errs, fmt.Errorf("removing rule %s: %w", k, err))
		}
	}
	for _, r := range rules {
		if have[r.key()] {
			continue
		}
		if err := netlink.RuleAdd(r.netlink()); err != nil {
			errs = append(errs, fmt.Errorf("adding rule to table %d: %w", r.Table, err))
		}
	}
	return errors.Join(errs...)
}

// fromNetlink is the PolicyRule of a rule read from the kernel.
func fromNetlink(c netlink.Rule) PolicyRule {
	r := PolicyRule{Priority: c.Priority, Table: c.Table, IIF: c.IifName}
	if c.Dst != nil {
		if p, ok := netip.AddrFromSlice(c.Dst.IP); ok {
			ones, _ := c.Dst.Mask.Size()
			r.Dst = netip.PrefixFrom(p.Unmap(), ones)
		}
	}
	if c.Mark > 0 {
		r.Mark = c.Mark
	}
	return r
}

func netipToIPNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: p.Masked().Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), 32)}
}

// localTable is the kernel's table of the namespace's own addresses,
// looked up by the rule of priority 0 unless moved.
const localTable = 255

// DeferLocalTable moves the lookup of the local table from priority 0 to
// prio, after the rules before it: in a gateway, the peer's addresses
// overlap the cluster's own, and a packet for the peer's pod that has the
// gateway's own address must still go into the tunnel, not to the
// gateway. Idempotent.
func DeferLocalTable(prio int) error {
	return moveLocalTable(0, prio)
}

// RestoreLocalTable undoes DeferLocalTable.
func RestoreLocalTable(prio int) error {
	return moveLocalTable(prio, 0)
}

// moveLocalTable makes the local table's rule be at to instead of from,
// adding the new rule before removing the old one, so that the namespace
// never has no way to its own addresses.
func moveLocalTable(from, to int) error {
	cur, err := netlink.RuleList(netlink.FAMILY_V4)
	if err != nil {
		return err
	}
	var old *netlink.Rule
	present := false
	for i := range cur {
		if cur[i].Table != localTable {
			continue
		}
		switch cur[i].Priority {
		case from:
			old = &cur[i]
		case to:
			present = true
		}
	}
	if !present {
		r := netlink.NewRule()
		r.Family, r.Priority, r.Table = netlink.FAMILY_V4, to, localTable
		if err := netlink.RuleAdd(r); err != nil {
			return fmt.Errorf("looking the local table up at priority %d: %w", to, err)
		}
	}
	if old != nil {
		if err := netlink.RuleDel(old); err != nil {
			return fmt.Errorf("removing the local table's rule at priority %d: %w", from, err)
		}
	}
	return nil
}
