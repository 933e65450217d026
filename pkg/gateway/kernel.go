package gateway

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/google/nftables"
	"github.com/vishvananda/netlink"

	"github.com/liqo-go/liqo/pkg/datapath"
)

// What the gateway adds to its network namespace, by name.
const (
	// NATTable is the gateway's nftables table.
	NATTable = "liqo-gateway"
	// DroppedSource counts, in NATTable, the packets from the tunnel
	// dropped for a source outside the peer's pod and external CIDRs;
	// DroppedDestination those the peer may send but not there (neither a
	// pod of this cluster nor an IP's twin, nor the connection check).
	DroppedSource      = "dropped-source"
	DroppedDestination = "dropped-destination"
	// TunnelTable routes what the nodes send into the tunnel; NodesTable
	// routes what the tunnel brings to the node of each pod.
	TunnelTable = 18400
	NodesTable  = 18401
	rulePrio    = 18400
	// localPrio is where the local table is looked up, after the
	// gateway's rules (DeferLocalTable).
	localPrio = 18410
	// ReturnMark marks the connections that came out of the tunnel, so that
	// their answers go back into it whichever link they arrive on: a local
	// IP's host answers the gateway (masqueraded) on its pod link, where
	// the main table would send a peer pod's address to the local pod that
	// has the same one.
	ReturnMark = 18400
	// ClientKeepalive keeps the client's NAT binding open and lets the
	// server learn the client's endpoint without waiting for traffic.
	ClientKeepalive = 10 * time.Second
)

// Tunnel addresses: a /30 shared by the two ends.
var (
	ServerTunnelAddress = netip.MustParsePrefix("169.254.18.1/30")
	ClientTunnelAddress = netip.MustParsePrefix("169.254.18.2/30")
)

// Kernel applies the State in the gateway's own network namespace.
type Kernel struct {
	Mode       Mode
	PrivateKey []byte
	ListenPort int
	MTU        int
	// Endpoint is the server's host:port, for a client.
	Endpoint string

	// mu orders Apply and Rehandshake, which run in different goroutines.
	mu     sync.Mutex
	tunnel *datapath.Tunnel
}

var _ Applier = (*Kernel)(nil)

// Apply brings the namespace in line with s.
func (k *Kernel) Apply(_ context.Context, s State) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.tunnel == nil {
		if err := looseReversePath(); err != nil {
			return err
		}
		if err := datapath.DeferLocalTable(localPrio); err != nil {
			return err
		}
		addr, port := ServerTunnelAddress, k.ListenPort
		if k.Mode == Client {
			addr, port = ClientTunnelAddress, 0
		}
		t, err := datapath.OpenTunnel(datapath.TunnelConfig{PrivateKey: k.PrivateKey, ListenPort: port, MTU: k.MTU, Address: addr})
		if err != nil {
			return err
		}
		if err := acceptLocalSources(t.Link()); err != nil {
			t.Close()
			return err
		}
		k.tunnel = t
	}
	var errs []error
	if s.PeerKey != nil {
		endpoint, keepalive := "", time.Duration(0)
		if k.Mode == Client {
			endpoint, keepalive = k.Endpoint, ClientKeepalive
		}
		errs = append(errs, k.tunnel.SetPeer(s.PeerKey, endpoint, keepalive))
	}

	keep := map[string]bool{}
	var nodeRoutes []datapath.Route
	rules := []datapath.PolicyRule{{Priority: rulePrio, Table: NodesTable, IIF: datapath.TunnelName}}
	for _, n := range s.Nodes {
		link, err := datapath.EnsureVXLAN(datapath.VXLAN{
			Name: OverlayLinkName(n.VNI), VNI: n.VNI, Remote: n.Address, Port: OverlayPort, MTU: k.MTU,
			MAC: OverlayMAC(n.VNI, true), Hop: NodeHop, HopMAC: OverlayMAC(n.VNI, false),
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("overlay to node %s: %w", n.Name, err))
			continue
		}
		keep[link.Attrs().Name] = true
		for _, c := range n.PodCIDRs {
			nodeRoutes = append(nodeRoutes, datapath.Route{Dst: c, Link: link, Hop: NodeHop})
		}
		rules = append(rules, datapath.PolicyRule{Priority: rulePrio + 1, Table: TunnelTable, IIF: link.Attrs().Name})
	}
	rules = append(rules, datapath.PolicyRule{Priority: rulePrio + 2, Table: TunnelTable, Mark: ReturnMark})
	errs = append(errs,
		forwarding(),
		datapath.PruneLinks(overlayLinkPrefix, keep),
		datapath.SyncTable(NodesTable, nodeRoutes),
		datapath.SyncTable(TunnelTable, []datapath.Route{{Dst: netip.MustParsePrefix("0.0.0.0/0"), Link: k.tunnel.Link()}}),
		datapath.SyncRules([]int{NodesTable, TunnelTable}, rules),
		datapath.ReplaceTable(NATTable, NATChains(s), DroppedSource, DroppedDestination),
	)
	return errors.Join(errs...)
}

// Rehandshake starts the tunnel's session over (see Tunnel.Rehandshake).
func (k *Kernel) Rehandshake() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.tunnel == nil {
		return nil
	}
	return k.tunnel.Rehandshake()
}

// HasPeer tells whether the tunnel has its peer.
func (k *Kernel) HasPeer() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.tunnel != nil && k.tunnel.HasPeer()
}

// Close removes everything Apply added.
func (k *Kernel) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	errs := []error{
		datapath.DeleteTable(NATTable),
		datapath.SyncRules([]int{NodesTable, TunnelTable}, nil),
		datapath.SyncTable(NodesTable, nil),
		datapath.SyncTable(TunnelTable, nil),
		datapath.PruneLinks(overlayLinkPrefix, nil),
		datapath.RestoreLocalTable(localPrio),
	}
	if k.tunnel != nil {
		k.tunnel.Close()
		k.tunnel = nil
	}
	return errors.Join(errs...)
}

// overlayLinkPrefix starts every overlay link's name (OverlayLinkName).
const overlayLinkPrefix = "liqo."

// NATChains are the gateway's NAT rules for s. Inside the tunnel packets
// carry both clusters' real addresses; each gateway translates only its
// own view of the peer: what the nodes send to a remapped address goes to
// the real one (DNAT, before routing picks the tunnel), and what the
// tunnel brings from a real peer address leaves with the remapped one
// (SNAT), so local pods see the peer where they can route it. Prefix NAT
// keeps the host bits: 10.71.1.5 is the peer's 10.244.1.5. A pair that was
// not remapped needs no rule. TCP SYNs into the tunnel get their MSS
// clamped to its MTU.
//
// A local IP's twin, arriving from the tunnel, goes to the real address
// (DNAT); with Masquerade it leaves behind the gateway's own address, a
// source NAT that comes first, since a connection gets only one.
func NATChains(s State) []datapath.Chain {
	pre := datapath.Chain{Name: "outgoing", Type: nftables.ChainTypeNAT,
		Hook: nftables.ChainHookPrerouting, Priority: nftables.ChainPriorityNATDest}
	post := datapath.Chain{Name: "incoming", Type: nftables.ChainTypeNAT,
		Hook: nftables.ChainHookPostrouting, Priority: nftables.ChainPriorityNATSource}
	for _, ip := range s.IPs {
		pre.Rules = append(pre.Rules, datapath.Join(fromTunnel,
			datapath.Addr(false, netip.PrefixFrom(ip.Twin, 32)), datapath.PrefixNAT(false, netip.PrefixFrom(ip.Real, 32))))
		if ip.Masquerade {
			post.Rules = append(post.Rules, datapath.Join(fromTunnel, datapath.Addr(false, netip.PrefixFrom(ip.Real, 32)), datapath.Masquerade()))
		}
	}
	for _, p := range append(append([]Pair{}, s.Pod...), s.External...) {
		if p.Real == p.Remapped {
			continue
		}
		pre.Rules = append(pre.Rules, datapath.Join(
			datapath.IfName(true, datapath.TunnelName, false), datapath.Addr(false, p.Remapped), datapath.PrefixNAT(false, p.Real)))
		post.Rules = append(post.Rules, datapath.Join(fromTunnel, datapath.Addr(true, p.Real), datapath.PrefixNAT(true, p.Remapped)))
	}
	post.Rules = append(post.Rules, intoTunnel(s)...)
	mss := datapath.Chain{Name: "mss", Type: nftables.ChainTypeFilter,
		Hook: nftables.ChainHookForward, Priority: nftables.ChainPriorityMangle,
		Rules: []datapath.Rule{datapath.Join(datapath.IfName(false, datapath.TunnelName, true), datapath.ClampMSS())}}
	// Before NAT and routing: connections from the tunnel are marked, and
	// their answers carry the mark the ReturnMark rule routes by.
	mark := datapath.Chain{Name: "return", Type: nftables.ChainTypeFilter,
		Hook: nftables.ChainHookPrerouting, Priority: nftables.ChainPriorityMangle,
		Rules: []datapath.Rule{
			datapath.Join(fromTunnel, datapath.SetConnMark(ReturnMark)),
			datapath.Join(datapath.IfName(true, datapath.TunnelName, false), datapath.ConnMark(ReturnMark), datapath.SetMark(ReturnMark)),
		}}
	return append([]datapath.Chain{mark, pre, post, mss}, fromTunnelFilter(s)...)
}

// fromTunnel matches what comes out of the tunnel, toTunnel what goes in.
var (
	fromTunnel = datapath.IfName(true, datapath.TunnelName, true)
	toTunnel   = datapath.IfName(false, datapath.TunnelName, true)
)

// intoTunnel are the source NAT rules of what the gateway sends into the
// tunnel: pods keep their addresses (the peer maps them), the gateway's
// own tunnel address is the connection check's; anything else — a node,
// a pod on the host network — goes behind the gateway pod's address
// (s.Self), which the peer reaches back as a pod, or is dropped without
// one: the peer could not answer a node's address, and its answer would
// leave on its default route.
func intoTunnel(s State) []datapath.Rule {
	tunnel := netip.PrefixFrom(ServerTunnelAddress.Masked().Addr(), ServerTunnelAddress.Bits())
	rules := []datapath.Rule{datapath.Join(toTunnel, datapath.Addr(true, tunnel), datapath.Accept())}
	for _, n := range s.Nodes {
		for _, c := range n.PodCIDRs {
			rules = append(rules, datapath.Join(toTunnel, datapath.Addr(true, c), datapath.Accept()))
		}
	}
	if !s.Self.IsValid() {
		return append(rules, datapath.Join(toTunnel, datapath.Drop()))
	}
	return append(rules, datapath.Join(toTunnel, datapath.SNATTo(s.Self)))
}

// fromTunnelFilter is what a peer may send through the tunnel. The peer
// decides what it puts in (a modified gateway can write any packet), so:
//
//   - the source must be one of the peer's pod or external CIDRs as they
//     really are (as in the tunnel; the remapped ones are these, one to one,
//     and SNAT to them comes later, in postrouting): a peer cannot pass off
//     a packet as this cluster's node, another peer's pod or anything else;
//   - forwarded, it must be an answer, or a new connection to this cluster's
//     pods (the nodes' pod CIDRs) or to a local IP's address through its
//     twin (DNAT'd: a peer sending to the address itself is not let in);
//     nodes, Services, the underlay, other tenants' gateways are not;
//   - to the gateway itself, only the connection check, between the tunnel
//     addresses.
//
// Everything else is dropped and counted (DroppedSource,
// DroppedDestination), so that a peer sending what it may not shows up.
func fromTunnelFilter(s State) []datapath.Chain {
	fwd := datapath.Chain{Name: "from-tunnel", Type: nftables.ChainTypeFilter,
		Hook: nftables.ChainHookForward, Priority: nftables.ChainPriorityFilter}
	in := datapath.Chain{Name: "to-gateway", Type: nftables.ChainTypeFilter,
		Hook: nftables.ChainHookInput, Priority: nftables.ChainPriorityFilter}
	// Reached only from fwd, for a packet from the tunnel whose source is
	// the peer's.
	peer := datapath.Chain{Name: "from-peer"}
	peerRanges := append(append([]Pair{}, s.Pod...), s.External...)
	for _, p := range peerRanges {
		fwd.Rules = append(fwd.Rules, datapath.Join(fromTunnel, datapath.Addr(true, p.Real), datapath.Goto(peer.Name)))
	}
	// The peer gateway's ICMP errors (a packet too big for its link to a
	// node) come from its tunnel address; only as errors about a
	// connection already let through.
	fwd.Rules = append(fwd.Rules,
		datapath.Join(fromTunnel, datapath.Addr(true, ServerTunnelAddress.Masked()), datapath.ConnRelated(), datapath.Goto(peer.Name)),
		datapath.Join(fromTunnel, datapath.CountIn(DroppedSource), datapath.Drop()))

	peer.Rules = append(peer.Rules, datapath.Join(datapath.ConnReply(), datapath.Accept()))
	for _, n := range s.Nodes {
		for _, c := range n.PodCIDRs {
			peer.Rules = append(peer.Rules, datapath.Join(datapath.Addr(false, c), datapath.Accept()))
		}
	}
	for _, ip := range s.IPs {
		peer.Rules = append(peer.Rules, datapath.Join(datapath.Addr(false, netip.PrefixFrom(ip.Real, 32)), datapath.DestNATed(), datapath.Accept()))
	}
	peer.Rules = append(peer.Rules, datapath.Join(datapath.CountIn(DroppedDestination), datapath.Drop()))

	// Both ends ping from and to CheckPort, so the check's answers are
	// matched here too, and nothing else the gateway listens on (its
	// health port) is reachable from the tunnel.
	tunnel := ServerTunnelAddress.Masked()
	in.Rules = []datapath.Rule{
		datapath.Join(fromTunnel, datapath.Addr(true, tunnel), datapath.Addr(false, tunnel), datapath.UDPDestPort(CheckPort), datapath.Accept()),
		datapath.Join(fromTunnel, datapath.Addr(true, tunnel), datapath.CountIn(DroppedDestination), datapath.Drop()),
	}
	for _, p := range peerRanges {
		in.Rules = append(in.Rules, datapath.Join(fromTunnel, datapath.Addr(true, p.Real), datapath.CountIn(DroppedDestination), datapath.Drop()))
	}
	in.Rules = append(in.Rules, datapath.Join(fromTunnel, datapath.CountIn(DroppedSource), datapath.Drop()))
	return []datapath.Chain{fwd, peer, in}
}

// acceptLocalSources lets packets that come out of the tunnel carry one
// of the namespace's own addresses as their source. The tunnel carries the
// peer's real addresses, and the peer's pod CIDR may be the cluster's own,
// so a peer pod may have the very address the gateway pod has here. The
// kernel checks a forwarded packet's source with a reverse route lookup
// from the link it leaves on and, finding a local address, drops it as a
// martian source, whatever rp_filter says. Traffic to the nodes' pods
// leaves through an overlay link, whose rule sends that lookup to the
// tunnel table, but traffic leaving through the pod link meets the local
// table: the answers to a node's (or host-network pod's) connection, which
// entered the tunnel behind the gateway's address, when the peer pod it
// reached has that address too; and a peer pod's requests to a local IP,
// when the pod has it. Which pod gets which address is chance, so such
// connections failed now and then, and for as long as the pods lived.
func acceptLocalSources(tunnel netlink.Link) error {
	return datapath.SetLinkConf(tunnel, map[datapath.LinkConf]uint32{datapath.AcceptLocal: 1})
}

// Dropped returns how many packets from the tunnel the gateway dropped
// (fromTunnelFilter), by counter name; read in its network namespace.
func Dropped() (map[string]datapath.Count, error) {
	return datapath.Counters(NATTable)
}

// Dropped is the package's Dropped: the kernel's counters are the
// namespace's.
func (k *Kernel) Dropped() (map[string]datapath.Count, error) { return Dropped() }

// forwarding turns the namespace into a router: every link forwards what
// arrives on it, with no reverse-path filter of its own (answers from the
// tunnel come back on other links than the routes to their sources). Set
// link by link over netlink, and on every Apply, since overlay links come
// and go: the namespace-wide sysctls (ip_forward, conf/all) sit in
// /proc/sys, read-only in an unprivileged container, and the kernel
// decides forwarding by the ingress link's own flag anyway.
func forwarding() error {
	links, err := netlink.LinkList()
	if err != nil {
		return fmt.Errorf("listing links: %w", err)
	}
	var errs []error
	for _, l := range links {
		if l.Attrs().Flags&net.FlagLoopback != 0 {
			continue
		}
		errs = append(errs, datapath.SetLinkConf(l, map[datapath.LinkConf]uint32{datapath.Forwarding: 1, datapath.RPFilter: 0}))
	}
	return errors.Join(errs...)
}

// looseReversePath checks the one setting forwarding cannot make: the
// kernel filters by the larger of conf/all/rp_filter and the link's own,
// and "all" is copied from the host's namespace when the pod's is created,
// out of reach without privileges. Loose filtering (2) passes whatever the
// pod's default route could answer, which is everything here; strict (1)
// drops the tunnel's traffic.
func looseReversePath() error {
	v, err := datapath.LinkConfOf("all", datapath.RPFilter)
	if err != nil {
		return fmt.Errorf("reading the namespace's reverse-path filter: %w", err)
	}
	if v == 1 {
		return errors.New("net.ipv4.conf.all.rp_filter is 1 (strict) in the gateway's network namespace, copied from the node's when the pod started: " +
			"strict reverse-path filtering drops the traffic the tunnel forwards; set it to 0 or 2 on the gateway's nodes")
	}
	return nil
}
