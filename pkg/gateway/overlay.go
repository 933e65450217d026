package gateway

import (
	"hash/fnv"
	"net"
	"net/netip"
)

// The overlay between the nodes and a gateway is one point-to-point VXLAN
// link per (gateway, node) pair, on both ends. Neither end holds an
// address on it: each routes through a fixed next hop on the link whose
// MAC address is static (both ends derive both MACs from the pair), so no
// ARP crosses the link and no overlay address has to be allocated,
// published or kept unique across the cluster.
const (
	// OverlayPort is the links' UDP port, clear of the CNIs' VXLAN ports
	// (4789, 8472).
	OverlayPort = 6091
	// OverlayMTU is the tunnel's: a packet that fits the tunnel fits the
	// link, and the 50 bytes of VXLAN header still fit a 1500-byte pod
	// network.
	OverlayMTU = 1340
)

// Next hops on every overlay link: the gateway end is GatewayHop, the node
// end NodeHop. They are link-local and never leave the link.
var (
	GatewayHop = netip.MustParseAddr("169.254.19.1")
	NodeHop    = netip.MustParseAddr("169.254.19.2")
)

// OverlayVNI is the VXLAN network identifier of the link between gateway
// (its UID) and node: 24 bits, derived from both so that the two ends
// agree without talking, and distinct per pair (a collision among the
// links of one network namespace is refused by the kernel and reported).
func OverlayVNI(gatewayUID, node string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(gatewayUID))
	_, _ = h.Write([]byte{0})
	_, _ = h.Write([]byte(node))
	v := h.Sum32() & 0xFFFFFF
	if v == 0 {
		v = 1 // VNI 0 is reserved
	}
	return v
}

// OverlayMAC is the MAC address of one end of the link with vni: locally
// administered, unicast, the end (gateway or node) in the first byte.
func OverlayMAC(vni uint32, gatewayEnd bool) net.HardwareAddr {
	first := byte(0x02) // locally administered, unicast
	if gatewayEnd {
		first = 0x06
	}
	return net.HardwareAddr{first, 0x4c, 0x51, byte(vni >> 16), byte(vni >> 8), byte(vni)}
}

// OverlayLinkName is the link's name on either end: "liqo." and the VNI
// in hex, within the 15 bytes a link name may have.
func OverlayLinkName(vni uint32) string {
	const hex = "0123456789abcdef"
	b := []byte("liqo.000000")
	for i := 0; i < 6; i++ {
		b[len(b)-1-i] = hex[(vni>>(4*i))&0xF]
	}
	return string(b)
}
