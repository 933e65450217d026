package fabric

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/gateway"
)

// Gateway is one gateway of the cluster as the node agent sees it: its
// pod's address (the overlay's far end), its UID (with the node's name, it
// makes the link's VNI) and the peer CIDRs it carries, as this cluster
// sees them (remapped).
type Gateway struct {
	// Key names the gateway ("namespace/name"), for the link's record.
	Key     string
	UID     string
	PodIP   netip.Addr
	Remotes []netip.Prefix
}

// Link is the overlay link from this node to one gateway, and what is
// routed through it.
type Link struct {
	Gateway string
	VNI     uint32
	Remote  netip.Addr
	Routes  []netip.Prefix
}

// GatewayFrom checks and converts what the node agent reads of a gateway:
// the status its controller wrote and the Configuration of the same peer.
// The remapped CIDRs came from this cluster's IPAM, but the Configuration
// spec they sit next to came from the peer, so they are checked as
// carefully as the gateway checks them.
func GatewayFrom(key, uid string, internal *netv1beta1.InternalGatewayEndpoint, cfg *netv1beta1.Configuration) (Gateway, error) {
	g := Gateway{Key: key, UID: uid}
	if internal == nil || internal.IP == nil {
		return g, fmt.Errorf("gateway %s has no pod address yet", key)
	}
	ip, err := netip.ParseAddr(string(*internal.IP))
	if err != nil || !ip.Is4() {
		return g, fmt.Errorf("gateway %s: pod address %q is not IPv4", key, *internal.IP)
	}
	g.PodIP = ip
	if cfg == nil || cfg.Status.Remote == nil {
		return g, nil // no CIDRs yet: the link comes up, routes follow
	}
	var errs []error
	for _, c := range slices.Concat(cfg.Status.Remote.CIDR.Pod, cfg.Status.Remote.CIDR.External) {
		p, err := netip.ParsePrefix(string(c))
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("configuration %s: %w", cfg.Name, err))
		case !p.Addr().Is4() || p.Masked() != p || p.Bits() == 0:
			errs = append(errs, fmt.Errorf("configuration %s: remapped CIDR %s is not a canonical IPv4 prefix", cfg.Name, p))
		default:
			g.Remotes = append(g.Remotes, p)
		}
	}
	return g, errors.Join(errs...)
}

// Desired is the node's links to gateways, sorted by gateway. Two
// gateways may not route the same CIDR (the IPAM never hands it twice):
// if they do, the CIDR is left to neither and reported, rather than
// picking one at random.
func Desired(node string, gws []Gateway) ([]Link, error) {
	owners := map[netip.Prefix][]string{}
	for _, g := range gws {
		for _, p := range g.Remotes {
			owners[p] = append(owners[p], g.Key)
		}
	}
	var errs []error
	var links []Link
	for _, g := range gws {
		l := Link{Gateway: g.Key, VNI: gateway.OverlayVNI(g.UID, node), Remote: g.PodIP}
		for _, p := range g.Remotes {
			if o := owners[p]; len(o) > 1 {
				if o[0] == g.Key {
					errs = append(errs, fmt.Errorf("CIDR %s is claimed by gateways %s: routed through none", p, strings.Join(o, ", ")))
				}
				continue
			}
			if overlaps(p, l.Routes) {
				continue
			}
			l.Routes = append(l.Routes, p)
		}
		links = append(links, l)
	}
	slices.SortFunc(links, func(a, b Link) int { return strings.Compare(a.Gateway, b.Gateway) })
	return links, errors.Join(errs...)
}

func overlaps(p netip.Prefix, in []netip.Prefix) bool {
	return slices.ContainsFunc(in, p.Overlaps)
}
