package gateway

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	ipamv1alpha1 "github.com/liqo-go/liqo/apis/ipam/v1alpha1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// Pair is one of the peer's CIDRs as it really is (what travels in the
// tunnel) and as this cluster sees it (remapped by the IPAM when it
// overlaps one of ours). Remapped equals Real when there was no overlap.
type Pair struct {
	Real, Remapped netip.Prefix
}

// NodeLink is the overlay link to one node: the gateway sends the tunnel's
// traffic for the node's pods (PodCIDRs) to Address through it.
type NodeLink struct {
	Name     string
	Address  netip.Addr
	PodCIDRs []netip.Prefix
	VNI      uint32
}

// LocalIP is a local address that is not a pod's (an IP object): peers
// reach Real at Twin, an address of this cluster's external CIDR as it
// really is (what travels in the tunnel). With Masquerade the gateway
// forwards the traffic behind its own address, for a host (the API
// server) that has no route back to the peer's pods.
type LocalIP struct {
	Real, Twin netip.Addr
	Masquerade bool
}

// State is everything the gateway applies in its network namespace.
type State struct {
	// PeerKey is the peer gateway's public key, nil until the peering
	// copied it here.
	PeerKey []byte
	// Pod and External are the peer's CIDRs, empty until the Configuration
	// is configured (remapped by the IPAM).
	Pod, External []Pair
	Nodes         []NodeLink
	// IPs are the local addresses peers reach through the tunnel.
	IPs []LocalIP
	// Self is the gateway pod's own address: what nodes and host-network
	// pods send into the tunnel leaves behind it, since the peer knows the
	// cluster's pod CIDRs (remapped) but not its node addresses. Unset, such
	// traffic is dropped instead.
	Self netip.Addr
}

// LocalIPs checks and converts the cluster's allocated IPs. They are the
// local administrators' (no peer writes them), but their addresses still
// reach nftables: an IP without an IPv4 address and twin is left out and
// reported, and so are two IPs with the same twin.
func LocalIPs(ips []ipamv1alpha1.IP) ([]LocalIP, error) {
	var out []LocalIP
	var errs []error
	seen := map[netip.Addr]string{}
	for i := range ips {
		ip := &ips[i]
		if ip.Status.IP == "" || !ip.DeletionTimestamp.IsZero() {
			continue // not allocated yet, or going
		}
		real, err1 := netip.ParseAddr(string(ip.Spec.IP))
		twin, err2 := netip.ParseAddr(string(ip.Status.IP))
		key := ip.Namespace + "/" + ip.Name
		switch {
		case err1 != nil || err2 != nil || !real.Is4() || !twin.Is4():
			errs = append(errs, fmt.Errorf("ip %s: %q → %q is not a pair of IPv4 addresses", key, ip.Spec.IP, ip.Status.IP))
			continue
		case seen[twin] != "":
			errs = append(errs, fmt.Errorf("ip %s: twin %s already stands for ip %s", key, twin, seen[twin]))
			continue
		}
		seen[twin] = key
		out = append(out, LocalIP{Real: real, Twin: twin, Masquerade: ip.Spec.Masquerade != nil && *ip.Spec.Masquerade})
	}
	slices.SortFunc(out, func(a, b LocalIP) int { return a.Twin.Compare(b.Twin) })
	return out, errors.Join(errs...)
}

// Desired is the state for the gateway with UID gatewayUID given the
// PublicKey and Configuration of its peer (nil when missing) and the
// cluster's nodes. Everything here comes from objects a peer can
// influence (the Configuration's spec holds the CIDRs the peer announced;
// the PublicKey holds its key), so each is checked before it reaches the
// kernel: what fails a check is left out and reported.
func Desired(gatewayUID string, pk *netv1beta1.PublicKey, cfg *netv1beta1.Configuration, nodes []corev1.Node) (State, error) {
	var s State
	var errs []error
	if pk != nil {
		if len(pk.Spec.PublicKey) != netv1beta1.PublicKeyLength {
			errs = append(errs, fmt.Errorf("publickey %s: %d bytes, not %d", pk.Name, len(pk.Spec.PublicKey), netv1beta1.PublicKeyLength))
		} else {
			s.PeerKey = slices.Clone(pk.Spec.PublicKey)
		}
	}
	if cfg != nil && cfg.Status.Remote != nil {
		var err error
		if s.Pod, err = pairs("pod", cfg.Spec.Remote.CIDR.Pod, cfg.Status.Remote.CIDR.Pod); err != nil {
			errs = append(errs, fmt.Errorf("configuration %s: %w", cfg.Name, err))
		}
		if s.External, err = pairs("external", cfg.Spec.Remote.CIDR.External, cfg.Status.Remote.CIDR.External); err != nil {
			errs = append(errs, fmt.Errorf("configuration %s: %w", cfg.Name, err))
		}
	}
	for i := range nodes {
		n := &nodes[i]
		if n.Labels[consts.TypeLabel] == consts.TypeVirtualNode {
			continue // a virtual node's pods are another cluster's
		}
		link, err := nodeLink(gatewayUID, n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		s.Nodes = append(s.Nodes, link)
	}
	slices.SortFunc(s.Nodes, func(a, b NodeLink) int { return strings.Compare(a.Name, b.Name) })
	return s, errors.Join(errs...)
}

// pairs zips a Configuration's announced CIDRs with their remapped ones:
// both lists index-aligned, every entry a valid IPv4 prefix, each pair of
// the same size (remapping swaps network bits only).
func pairs(what string, real, remapped []netv1beta1.CIDR) ([]Pair, error) {
	if len(real) != len(remapped) {
		return nil, fmt.Errorf("%d %s CIDRs but %d remapped ones", len(real), what, len(remapped))
	}
	var out []Pair
	for i := range real {
		r, err := prefix(real[i])
		if err != nil {
			return nil, fmt.Errorf("%s CIDR %q: %w", what, real[i], err)
		}
		m, err := prefix(remapped[i])
		if err != nil {
			return nil, fmt.Errorf("remapped %s CIDR %q: %w", what, remapped[i], err)
		}
		if r.Bits() != m.Bits() {
			return nil, fmt.Errorf("%s CIDR %s remapped to %s, of another size", what, r, m)
		}
		out = append(out, Pair{Real: r, Remapped: m})
	}
	return out, nil
}

// prefix parses an IPv4 CIDR in its canonical form (no host bits set): a
// prefix with host bits is a typo or a trick, and NAT by prefix would
// misread it.
func prefix(c netv1beta1.CIDR) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(string(c))
	if err != nil {
		return netip.Prefix{}, err
	}
	if !p.Addr().Is4() {
		return netip.Prefix{}, fmt.Errorf("not an IPv4 CIDR")
	}
	if p.Masked() != p {
		return netip.Prefix{}, fmt.Errorf("host bits set (did you mean %s?)", p.Masked())
	}
	if p.Bits() == 0 {
		return netip.Prefix{}, fmt.Errorf("a /0 would take every address")
	}
	return p, nil
}

func nodeLink(gatewayUID string, n *corev1.Node) (NodeLink, error) {
	var addr netip.Addr
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			if ip, err := netip.ParseAddr(a.Address); err == nil && ip.Is4() {
				addr = ip
				break
			}
		}
	}
	if !addr.IsValid() {
		return NodeLink{}, fmt.Errorf("node %s has no IPv4 internal address", n.Name)
	}
	cidrs := n.Spec.PodCIDRs
	if len(cidrs) == 0 && n.Spec.PodCIDR != "" {
		cidrs = []string{n.Spec.PodCIDR}
	}
	link := NodeLink{Name: n.Name, Address: addr, VNI: OverlayVNI(gatewayUID, n.Name)}
	for _, c := range cidrs {
		p, err := prefix(netv1beta1.CIDR(c))
		if err != nil {
			continue // an IPv6 pod CIDR of a dual-stack node
		}
		link.PodCIDRs = append(link.PodCIDRs, p)
	}
	if len(link.PodCIDRs) == 0 {
		return NodeLink{}, fmt.Errorf("node %s has no IPv4 pod CIDR: the gateway cannot tell which of its pods it hosts", n.Name)
	}
	return link, nil
}
