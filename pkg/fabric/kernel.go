package fabric

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/google/nftables"

	"github.com/liqo-go/liqo/pkg/datapath"
	"github.com/liqo-go/liqo/pkg/gateway"
)

// What the node agent adds to the node's network namespace, by name.
const (
	// NATTable is the node's nftables table (the masquerade bypass).
	NATTable = "liqo-fabric"
	// RouteTable holds the routes to the peers' CIDRs, each through the
	// overlay link to its gateway; one rule per CIDR sends them there.
	RouteTable = 18402
	rulePrio   = 18402
	linkPrefix = "liqo."
)

// Kernel applies the node's links in the node's network namespace.
type Kernel struct {
	// PodCIDRs are the cluster's own pod CIDRs: traffic from them to a peer
	// keeps its source address (the peer routes it back through its
	// gateway).
	PodCIDRs []netip.Prefix
	MTU      int
}

// Apply makes the node's overlay links, routes, rules and NAT table be
// exactly those of links; with none, nothing of ours is left on the node.
func (k *Kernel) Apply(links []Link) error {
	if len(links) == 0 {
		return k.Close()
	}
	var errs []error
	keep := map[string]bool{}
	var routes []datapath.Route
	var rules []datapath.PolicyRule
	var dsts []netip.Prefix
	for _, l := range links {
		link, err := datapath.EnsureVXLAN(datapath.VXLAN{
			Name: gateway.OverlayLinkName(l.VNI), VNI: l.VNI, Remote: l.Remote, Port: gateway.OverlayPort, MTU: k.MTU,
			MAC: gateway.OverlayMAC(l.VNI, false), Hop: gateway.GatewayHop, HopMAC: gateway.OverlayMAC(l.VNI, true),
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("overlay to gateway %s: %w", l.Gateway, err))
			continue
		}
		keep[link.Attrs().Name] = true
		for _, r := range l.Routes {
			routes = append(routes, datapath.Route{Dst: r, Link: link, Hop: gateway.GatewayHop})
			rules = append(rules, datapath.PolicyRule{Priority: rulePrio, Table: RouteTable, Dst: r})
			dsts = append(dsts, r)
		}
	}
	errs = append(errs,
		datapath.PruneLinks(linkPrefix, keep),
		datapath.SyncTable(RouteTable, routes),
		datapath.SyncRules([]int{RouteTable}, rules),
		datapath.ReplaceTable(NATTable, BypassChains(k.PodCIDRs, dsts)),
	)
	return errors.Join(errs...)
}

// Close removes everything Apply added.
func (k *Kernel) Close() error {
	return errors.Join(
		datapath.DeleteTable(NATTable),
		datapath.SyncRules([]int{RouteTable}, nil),
		datapath.SyncTable(RouteTable, nil),
		datapath.PruneLinks(linkPrefix, nil),
	)
}

// BypassChains keep the CNI from masquerading pod traffic bound to a peer:
// an identity source NAT (each pod CIDR onto itself) at a priority just
// before the usual masquerade rules; a connection gets one source NAT, the
// first, so theirs no longer applies and the peer sees the pod's address.
func BypassChains(podCIDRs, peers []netip.Prefix) []datapath.Chain {
	ch := datapath.Chain{Name: "masquerade-bypass", Type: nftables.ChainTypeNAT,
		Hook: nftables.ChainHookPostrouting, Priority: nftables.ChainPriorityRef(*nftables.ChainPriorityNATSource - 1)}
	for _, pod := range podCIDRs {
		for _, peer := range peers {
			ch.Rules = append(ch.Rules, datapath.Join(datapath.Addr(true, pod), datapath.Addr(false, peer), datapath.PrefixNAT(true, pod)))
		}
	}
	return []datapath.Chain{ch}
}
