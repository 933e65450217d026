package ipam

import (
	"fmt"
	"net/netip"
	"strings"
)

// MinPeerPrefixBits4 is the widest IPv4 network a peer may announce (a
// /8): a wider one is not a cluster's network but a claim on a good part
// of the address space, which every node would then route into the tunnel.
// It is also the size of the largest private range.
const MinPeerPrefixBits4 = 8

// MinPeerPrefixBits6 is the widest IPv6 network a peer may announce (a
// /48, one site's unique local network, RFC 4193).
const MinPeerPrefixBits6 = 48

// NodeNetworkBits4 and NodeNetworkBits6 are the size of the network
// assumed around each address a Node reports: a Node tells its addresses,
// not its netmask, and the neighbours on its link (its router, its DNS
// resolver) must stay reachable too. Reserving more than the real subnet
// only makes the IPAM remap more often.
const (
	NodeNetworkBits4 = 24
	NodeNetworkBits6 = 64
)

// namedPrefix is a range with the name a refusal gives it.
type namedPrefix struct {
	p    netip.Prefix
	name string
}

// privateRanges are what a peer may announce its networks in: the ranges
// no host on the internet has, so routing them to a peer takes nothing
// away from this cluster but what its own networks hold (checked apart).
// The shared address space of RFC 6598 is in: clusters use it for pods
// and Services where RFC 1918 is taken.
var privateRanges = []namedPrefix{
	{netip.MustParsePrefix("10.0.0.0/8"), "RFC 1918"},
	{netip.MustParsePrefix("172.16.0.0/12"), "RFC 1918"},
	{netip.MustParsePrefix("192.168.0.0/16"), "RFC 1918"},
	{netip.MustParsePrefix("100.64.0.0/10"), "RFC 6598 shared address space"},
	{netip.MustParsePrefix("fc00::/7"), "RFC 4193 unique local"},
}

// deniedRanges are special-purpose ranges, each with the reason users
// read: a peer claiming them would receive what every node sends there.
// They lie outside the private ranges and are refused anyway; they are
// named so that the refusal says why.
var deniedRanges = []namedPrefix{
	{netip.MustParsePrefix("0.0.0.0/8"), `"this network" (RFC 791)`},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local, where cloud metadata services answer (169.254.169.254)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved (RFC 1112) and broadcast"},
	{netip.MustParsePrefix("::/128"), "the unspecified address"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

// MetadataInPrivate are the cloud metadata services that answer inside
// the private ranges (Alibaba Cloud's in the shared address space; AWS's
// IPv6 one, with its DNS and time servers, among the unique local
// addresses). A peer may announce a network holding one (a pod CIDR of
// 100.96.0.0/11 is common), but this cluster never routes them to it: the
// IPAM counts them among its own networks, so such a network is remapped.
var MetadataInPrivate = []netip.Prefix{
	netip.MustParsePrefix("100.100.100.200/32"),
	netip.MustParsePrefix("fd00:ec2::/64"),
}

// ParsePeerCIDR parses a network a peer announces for the network fabric
// and refuses what this cluster must never route to it, whatever its own
// networks are: anything but a canonical prefix, a prefix wider than
// MinPeerPrefixBits4 (MinPeerPrefixBits6), one outside the private ranges
// (the error names the special-purpose range it touches, such as
// loopback, link-local where cloud metadata services answer, multicast or
// "this network"). Whether the prefix overlaps this cluster's own
// networks, or MetadataInPrivate, is the IPAM's business: it remaps such
// a prefix rather than refusing it, since independent clusters overlap.
func ParsePeerCIDR(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not a network such as 10.244.0.0/16", s)
	}
	if p.Addr().Zone() != "" || p.Addr().Is4In6() {
		return netip.Prefix{}, fmt.Errorf("%s: a zone or an IPv4-mapped IPv6 address is not a network", s)
	}
	if p.Masked() != p {
		return netip.Prefix{}, fmt.Errorf("%s has host bits set (did you mean %s?)", p, p.Masked())
	}
	minBits := MinPeerPrefixBits4
	if p.Addr().Is6() {
		minBits = MinPeerPrefixBits6
	}
	if p.Bits() < minBits {
		return netip.Prefix{}, fmt.Errorf("%s is wider than /%d, the widest network a peer may announce", p, minBits)
	}
	for _, d := range deniedRanges {
		if d.p.Overlaps(p) {
			return netip.Prefix{}, fmt.Errorf("%s overlaps %s, %s: a peer may not announce it", p, d.p, d.name)
		}
	}
	for _, r := range privateRanges {
		if r.p.Bits() <= p.Bits() && r.p.Contains(p.Addr()) {
			return p, nil
		}
	}
	return netip.Prefix{}, fmt.Errorf("%s is not inside a private range (%s): a peer may announce only private networks", p, privateList())
}

func privateList() string {
	var parts []string
	for _, r := range privateRanges {
		parts = append(parts, r.p.String())
	}
	return strings.Join(parts, ", ")
}

// NodeNetwork is the network assumed around addr, an address a Node
// reports (see NodeNetworkBits4).
func NodeNetwork(addr netip.Addr) netip.Prefix {
	addr = addr.Unmap().WithZone("")
	bits := NodeNetworkBits4
	if addr.Is6() {
		bits = NodeNetworkBits6
	}
	return netip.PrefixFrom(addr, bits).Masked()
}
