package fabric

import (
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"github.com/vishvananda/netlink"

	"github.com/liqo-go/liqo/pkg/datapath"
	"github.com/liqo-go/liqo/pkg/gateway"
	"github.com/liqo-go/liqo/pkg/testbed/netns"
)

// Addresses of the hostile peer's test. Milan's real pod CIDR is
// 10.244.0.0/16, which rome sees as 10.71.0.0/16.
var (
	// legitSrc is in milan's pod CIDR, on no pod: what a modified gateway
	// may send from.
	legitSrc = netip.MustParseAddr("10.244.9.9")
	// spoofedSrc is outside milan's CIDRs: say another peer's pods as rome
	// sees them. (Not an address of rome's own node: the node would drop a
	// packet from one of its own addresses whatever the gateway did.)
	spoofedSrc = netip.MustParseAddr("10.80.0.7")
)

// TestPeerSendsOnlyFromItsRanges: a modified peer writes whatever packets
// it likes into the tunnel. Milan's gateway namespace plays that peer: its
// own gateway's NAT is bypassed (conntrack off for the test's packets), so
// packets leave with the addresses the test picks, through the real
// WireGuard tunnel. Rome's gateway lets in a packet from milan's pod CIDR
// to rome's pod, and the connection check between the tunnel addresses,
// but drops, and counts, a packet from a source outside milan's CIDRs
// (another peer's, spoofed) to the same pod, one from milan's CIDR to
// rome's host (no pod, no IP's twin), and one to rome's gateway itself
// beyond the check.
func TestPeerSendsOnlyFromItsRanges(t *testing.T) {
	rome, milan := connected(t)
	// The tunnel is up (handshake done) once an ordinary connection
	// crosses it.
	echoServer(t, rome.pod, "10.244.1.5:8081")
	eventually(t, milan.pod, "10.72.1.5:8081")

	hostilePeer(t, milan.gw)
	before := dropped(t, rome.gw)

	// Receivers, each in a namespace of rome's.
	pod := udpReceiver(t, rome.pod, netip.MustParseAddrPort("10.244.1.5:9100"))
	host := udpReceiver(t, rome.node, netip.AddrPortFrom(apiServerAddr, 9100))
	romeTunnel := gateway.ClientTunnelAddress.Addr() // rome is the client
	milanTunnel := gateway.ServerTunnelAddress.Addr()
	gwOther := udpReceiver(t, rome.gw, netip.AddrPortFrom(romeTunnel, 9101))
	gwCheck := udpReceiver(t, rome.gw, netip.AddrPortFrom(romeTunnel, gateway.CheckPort))

	const tries = 5
	for range tries {
		udpSend(t, milan.gw, netip.AddrPortFrom(spoofedSrc, 9100), netip.MustParseAddrPort("10.244.1.5:9100"), "spoofed")
		udpSend(t, milan.gw, netip.AddrPortFrom(legitSrc, 9100), netip.AddrPortFrom(apiServerAddr, 9100), "to-host")
		udpSend(t, milan.gw, netip.AddrPortFrom(legitSrc, 9101), netip.AddrPortFrom(romeTunnel, 9101), "to-gateway")
		udpSend(t, milan.gw, netip.AddrPortFrom(milanTunnel, gateway.CheckPort), netip.AddrPortFrom(romeTunnel, gateway.CheckPort), "check")
		udpSend(t, milan.gw, netip.AddrPortFrom(legitSrc, 9100), netip.MustParseAddrPort("10.244.1.5:9100"), "legit")
		time.Sleep(100 * time.Millisecond)
	}
	// The legitimate packets crossing tells the hostile ones had their
	// chance too (same tunnel, sent before them).
	deadline := time.Now().Add(5 * time.Second)
	for (pod.count("legit") == 0 || gwCheck.count("check") == 0) && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)

	if pod.count("legit") == 0 {
		t.Errorf("rome's pod got no packet from milan's pod CIDR (%s)", legitSrc)
	} else if from := pod.from("legit"); from != netip.MustParseAddr("10.71.9.9") {
		t.Errorf("rome's pod saw milan's %s as %s, want 10.71.9.9 (remapped)", legitSrc, from)
	}
	if gwCheck.count("check") == 0 {
		t.Error("rome's gateway got no connection check from milan's tunnel address")
	}
	if n := pod.count("spoofed"); n > 0 {
		t.Errorf("rome's pod got %d packets from %s, a source outside milan's CIDRs", n, spoofedSrc)
	}
	if n := host.count("to-host"); n > 0 {
		t.Errorf("rome's host %s got %d packets from milan's tunnel: only pods and IPs' twins are reachable", apiServerAddr, n)
	}
	if n := gwOther.count("to-gateway"); n > 0 {
		t.Errorf("rome's gateway got %d packets at %s port 9101 from the tunnel: only the connection check is", n, romeTunnel)
	}

	after := dropped(t, rome.gw)
	if got := after[gateway.DroppedSource].Packets - before[gateway.DroppedSource].Packets; got < tries {
		t.Errorf("counter %s rose by %d, want at least %d (the spoofed packets)", gateway.DroppedSource, got, tries)
	}
	if got := after[gateway.DroppedDestination].Packets - before[gateway.DroppedDestination].Packets; got < 2*tries {
		t.Errorf("counter %s rose by %d, want at least %d (to rome's host and to its gateway)", gateway.DroppedDestination, got, 2*tries)
	}
}

// hostilePeer makes the gateway namespace ns send the test's packets
// untouched: they leave through the tunnel (a policy rule per test
// source) and skip conntrack, so the peer's own gateway does not NAT
// them, as a modified gateway would not.
func hostilePeer(t testing.TB, ns string) {
	t.Helper()
	h := handle(t, ns)
	for _, src := range []netip.Addr{legitSrc, spoofedSrc} {
		lo, err := h.LinkByName("lo")
		must(t, err)
		must(t, h.AddrAdd(lo, &netlink.Addr{IPNet: netipx(netip.PrefixFrom(src, 32))}))
		rule := netlink.NewRule()
		rule.Priority, rule.Table, rule.Src = 100, gateway.TunnelTable, netipx(netip.PrefixFrom(src, 32))
		must(t, h.RuleAdd(rule))
	}
	// The namespace goes with the test; the table is removed anyway, so
	// that the gateway's own Close sees its namespace as it left it.
	const table = "test-hostile-peer"
	notrack := datapath.Chain{Name: "out", Type: nftables.ChainTypeFilter,
		Hook: nftables.ChainHookOutput, Priority: nftables.ChainPriorityRaw,
		Rules: []datapath.Rule{datapath.Join(
			datapath.IfName(false, datapath.TunnelName, true), datapath.Rule{&expr.Notrack{}})}}
	must(t, netns.Do(ns, func() error { return datapath.ReplaceTable(table, []datapath.Chain{notrack}) }))
	t.Cleanup(func() { must(t, netns.Do(ns, func() error { return datapath.DeleteTable(table) })) })
}

// dropped reads the gateway's drop counters in ns.
func dropped(t testing.TB, ns string) map[string]datapath.Count {
	t.Helper()
	var c map[string]datapath.Count
	must(t, netns.Do(ns, func() (err error) {
		c, err = gateway.Dropped()
		return err
	}))
	return c
}

// receiver records the UDP datagrams that reach one address.
type receiver struct {
	mu   sync.Mutex
	got  map[string]int
	last map[string]netip.Addr
}

func (r *receiver) count(msg string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got[msg]
}

func (r *receiver) from(msg string) netip.Addr {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last[msg]
}

func udpReceiver(t testing.TB, ns string, at netip.AddrPort) *receiver {
	t.Helper()
	var conn *net.UDPConn
	must(t, netns.Do(ns, func() (err error) {
		conn, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(at))
		return err
	}))
	t.Cleanup(func() { _ = conn.Close() })
	r := &receiver{got: map[string]int{}, last: map[string]netip.Addr{}}
	go func() {
		buf := make([]byte, 64)
		for {
			n, from, err := conn.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			r.mu.Lock()
			r.got[string(buf[:n])]++
			r.last[string(buf[:n])] = from.Addr()
			r.mu.Unlock()
		}
	}()
	return r
}

// udpSend sends msg from inside ns, from one of its addresses.
func udpSend(t testing.TB, ns string, from, to netip.AddrPort, msg string) {
	t.Helper()
	must(t, netns.Do(ns, func() error {
		c, err := net.DialUDP("udp4", net.UDPAddrFromAddrPort(from), net.UDPAddrFromAddrPort(to))
		if err != nil {
			return err
		}
		defer func() { _ = c.Close() }()
		_, err = c.Write([]byte(msg))
		return err
	}))
}
