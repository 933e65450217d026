package fabric

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/liqo-go/liqo/pkg/datapath"
	"github.com/liqo-go/liqo/pkg/fabric"
	"github.com/liqo-go/liqo/pkg/gateway"
	"github.com/liqo-go/liqo/pkg/testbed/netns"
)

// echoServer answers every connection with the address it came from.
func echoServer(t testing.TB, ns string, addr string) {
	t.Helper()
	l, err := netns.Listen(ns, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_, _ = fmt.Fprintln(c, c.RemoteAddr().(*net.TCPAddr).IP)
			_ = c.Close()
		}
	}()
}

// ask dials addr from inside ns and returns what the server said.
func ask(ns, addr string) (string, error) { return askFrom(ns, netip.Addr{}, addr) }

// eventually retries ask until it answers (the WireGuard handshake takes a
// round trip or two).
func eventually(t testing.TB, ns, addr string) string {
	t.Helper()
	return untilAnswered(t, fmt.Sprintf("from %s to %s", ns, addr), func() (string, error) { return ask(ns, addr) })
}

// untilAnswered retries try for 15 s at most, failing the test with what
// and the last error if it never answers.
func untilAnswered(t testing.TB, what string, try func() (string, error)) string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		got, err := try()
		if err == nil {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// connected builds rome and milan, runs their gateways and applies their
// nodes' overlay (as root, which network namespaces need); everything is
// removed, and checked gone, at the end.
func connected(t testing.TB) (rome, milan *cluster) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("the datapath test needs root (network namespaces); CI runs as root")
	}
	prefix := fmt.Sprintf("lqdp%d-", os.Getpid()%100000)
	inet := newNS(t, prefix+"inet")
	bridge(t, inet, "br0", netip.Prefix{})
	rome = build(t, prefix, "rome", inet, netip.MustParseAddr("198.18.0.1"))
	milan = build(t, prefix, "milan", inet, netip.MustParseAddr("198.18.0.2"))

	romeSeesMilan := netip.MustParsePrefix("10.71.0.0/16")
	milanSeesRome := netip.MustParsePrefix("10.72.0.0/16")
	// Rome's host at apiServerAddr (on its node, as an API server's
	// ClusterIP is reached through the node) is reachable from milan at
	// the twin rome's IPAM gave it in its external CIDR, which milan sees
	// remapped too.
	milanSeesRomeExternal := netip.MustParsePrefix("10.73.0.0/16")
	lo, err := handle(t, rome.node).LinkByName("lo")
	if err != nil {
		t.Fatal(err)
	}
	if err := handle(t, rome.node).AddrAdd(lo, &netlink.Addr{IPNet: netipx(netip.PrefixFrom(apiServerAddr, 32))}); err != nil {
		t.Fatal(err)
	}
	if err := handle(t, rome.gw).RouteAdd(&netlink.Route{Dst: netipx(netip.PrefixFrom(apiServerAddr, 32)), Gw: nodeAddr.Addr().AsSlice()}); err != nil {
		t.Fatal(err)
	}
	for _, side := range []struct {
		c, peer *cluster
		mode    gateway.Mode
		remap   netip.Prefix
		// external is the peer's external CIDR as this side sees it; ips
		// are this side's local IPs.
		external []gateway.Pair
		ips      []gateway.LocalIP
	}{
		{milan, rome, gateway.Server, milanSeesRome, []gateway.Pair{{Real: externalCIDR, Remapped: milanSeesRomeExternal}}, nil},
		{rome, milan, gateway.Client, romeSeesMilan, nil, []gateway.LocalIP{{Real: apiServerAddr, Twin: apiServerTwin, Masquerade: true}}},
	} {
		uid := "uid-" + side.c.name
		vni := gateway.OverlayVNI(uid, side.c.name+"-node")
		k := &gateway.Kernel{Mode: side.mode, PrivateKey: side.c.private, ListenPort: 51840, MTU: 1340}
		if side.mode == gateway.Client {
			k.Endpoint = net.JoinHostPort(side.peer.underlay.String(), "51840")
		}
		gatewayProcess(t, side.c, k, gateway.State{
			PeerKey:  side.peer.public,
			Pod:      []gateway.Pair{{Real: podCIDR, Remapped: side.remap}},
			External: side.external,
			IPs:      side.ips,
			Self:     side.c.gwAddr.Addr(),
			Nodes: []gateway.NodeLink{{Name: side.c.name + "-node", Address: nodeAddr.Addr(),
				PodCIDRs: []netip.Prefix{nodeCIDR}, VNI: vni}},
		})
		node := &fabric.Kernel{PodCIDRs: []netip.Prefix{podCIDR}, MTU: 1340}
		routes := []netip.Prefix{side.remap}
		for _, e := range side.external {
			routes = append(routes, e.Remapped)
		}
		links := []fabric.Link{{Gateway: "gw", VNI: vni, Remote: side.c.gwAddr.Addr(), Routes: routes}}
		must(t, netns.Do(side.c.node, func() error { return node.Apply(links) }))
		nodeNS := side.c.node
		t.Cleanup(func() {
			must(t, netns.Do(nodeNS, node.Close))
			checkNothingLeft(t, nodeNS, fabric.NATTable, fabric.RouteTable)
		})
	}

	return rome, milan
}

// TestOverlappingPodCIDRs: rome and milan both use 10.244.0.0/16 and each
// has a pod at 10.244.1.5. Rome reaches milan's pods at 10.71.0.0/16,
// milan reaches rome's at 10.72.0.0/16. A TCP connection from rome's pod
// to 10.71.1.5 reaches milan's pod, which sees it come from 10.72.1.5
// (rome's pod, as milan sees it), and the same the other way. Then the
// gateways and the node agents remove what they added, and nothing of
// ours is left in the namespaces.
func TestOverlappingPodCIDRs(t *testing.T) {
	rome, milan := connected(t)
	echoServer(t, milan.pod, "10.244.1.5:8080")
	echoServer(t, rome.pod, "10.244.1.5:8081")
	if got := eventually(t, rome.pod, "10.71.1.5:8080"); got != "10.72.1.5" {
		t.Fatalf("milan's pod saw rome's pod as %s, want 10.72.1.5", got)
	}
	if got := eventually(t, milan.pod, "10.72.1.5:8081"); got != "10.71.1.5" {
		t.Fatalf("rome's pod saw milan's pod as %s, want 10.71.1.5", got)
	}
	// A pod's own cluster is still its own: 10.244.1.5 is the local pod.
	if _, err := ask(rome.pod, "10.244.1.5:8080"); err == nil {
		t.Fatal("rome's pod reached port 8080 at its own address: the remote server leaked into the local range")
	}
}

// TestPeerPodAtGatewayAddress: milan has a pod at the address rome's
// gateway has in rome (the clusters' pod CIDRs overlap): rome's pod
// reaches it through the tunnel, rather than the gateway taking the packet
// for itself.
func TestPeerPodAtGatewayAddress(t *testing.T) {
	rome, milan := connected(t)
	h := handle(t, milan.pod)
	eth0, err := h.LinkByName("eth0")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.AddrAdd(eth0, &netlink.Addr{IPNet: netipx(rome.gwAddr)}); err != nil {
		t.Fatal(err)
	}
	echoServer(t, milan.pod, netip.AddrPortFrom(rome.gwAddr.Addr(), 8090).String())
	at := netip.AddrFrom4([4]byte{10, 71, 1, rome.gwAddr.Addr().As4()[3]}) // rome's view of milan's pod
	if got := eventually(t, rome.pod, netip.AddrPortFrom(at, 8090).String()); got != "10.72.1.5" {
		t.Fatalf("milan's pod at %s saw rome's pod as %s, want 10.72.1.5", rome.gwAddr.Addr(), got)
	}
}

// TestLocalIP: milan's pod reaches a host of rome that is not a pod (as
// offloaded pods reach their home API server) at the address milan sees
// for the twin rome's IPAM gave it: rome's gateway translates the twin to
// the host's address and masquerades the connection behind its own, so the
// host answers the gateway, whatever routes it has.
func TestLocalIP(t *testing.T) {
	rome, milan := connected(t)
	echoServer(t, rome.node, netip.AddrPortFrom(apiServerAddr, 6443).String())
	twin := netip.AddrFrom4([4]byte{10, 73, 0, apiServerTwin.As4()[3]}) // milan's view of rome's 10.70.0.x
	if got := eventually(t, milan.pod, netip.AddrPortFrom(twin, 6443).String()); got != rome.gwAddr.Addr().String() {
		t.Fatalf("rome's host saw milan's pod as %s, want rome's gateway %s (masqueraded)", got, rome.gwAddr.Addr())
	}
}

// TestPeerReachesOnlyPodsAndIPs: a peer decides what it sends into the
// tunnel. Milan's gateway sends rome's host address itself (not its twin)
// into the tunnel: rome's gateway drops it, while the twin still works.
func TestPeerReachesOnlyPodsAndIPs(t *testing.T) {
	rome, milan := connected(t)
	echoServer(t, rome.node, netip.AddrPortFrom(apiServerAddr, 6443).String())
	twin := netip.AddrFrom4([4]byte{10, 73, 0, apiServerTwin.As4()[3]})
	eventually(t, milan.pod, netip.AddrPortFrom(twin, 6443).String())

	h := handle(t, milan.gw)
	tun, err := h.LinkByName(datapath.TunnelName)
	if err != nil {
		t.Fatal(err)
	}
	// Rome's host by its own address, and rome's node by its address on
	// the underlay side of the gateway (a host that is neither a pod nor
	// an IP's twin).
	if err := h.RouteAdd(&netlink.Route{Dst: netipx(netip.PrefixFrom(apiServerAddr, 32)), LinkIndex: tun.Attrs().Index}); err != nil {
		t.Fatal(err)
	}
	if got, err := ask(milan.gw, netip.AddrPortFrom(apiServerAddr, 6443).String()); err == nil {
		t.Errorf("milan reached rome's %s through the tunnel (it answered %s): only pods and IPs' twins are reachable", apiServerAddr, got)
	}
}

// checkNothingLeft fails the test if the node namespace still holds a
// link, rule, route or nftables table of ours.
func checkNothingLeft(t testing.TB, ns, table string, routeTable int) {
	t.Helper()
	must(t, netns.Do(ns, func() error {
		links, err := netlink.LinkList()
		if err != nil {
			return err
		}
		for _, l := range links {
			if strings.HasPrefix(l.Attrs().Name, "liqo") {
				t.Errorf("%s: link %s left", ns, l.Attrs().Name)
			}
		}
		rules, err := netlink.RuleList(netlink.FAMILY_V4)
		if err != nil {
			return err
		}
		for _, r := range rules {
			if r.Table == routeTable {
				t.Errorf("%s: rule to table %d left", ns, routeTable)
			}
		}
		routes, err := netlink.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Table: routeTable}, netlink.RT_FILTER_TABLE)
		if err != nil {
			return err
		}
		if len(routes) > 0 {
			t.Errorf("%s: %d routes left in table %d", ns, len(routes), routeTable)
		}
		exists, err := datapath.TableExists(table)
		if exists {
			t.Errorf("%s: nftables table %s left", ns, table)
		}
		return err
	}))
}

// BenchmarkTunnel streams TCP from rome's pod to milan's pod through both
// gateways (overlay, NAT, WireGuard) and reports the throughput.
func BenchmarkTunnel(b *testing.B) {
	_, _ = connected(b)
	romePod := fmt.Sprintf("lqdp%d-rome-pod", os.Getpid()%100000)
	milanPod := fmt.Sprintf("lqdp%d-milan-pod", os.Getpid()%100000)
	l, err := netns.Listen(milanPod, "tcp", "10.244.1.5:9000")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	received := make(chan int64, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			received <- -1
			return
		}
		n, _ := io.Copy(io.Discard, c)
		received <- n
	}()
	echoServer(b, milanPod, "10.244.1.5:8080")
	eventually(b, romePod, "10.71.1.5:8080") // the handshake is done
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := netns.Dial(ctx, romePod, "tcp", "10.71.1.5:9000")
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	b.SetBytes(int64(len(buf)))
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if _, err := c.Write(buf); err != nil {
			b.Fatal(err)
		}
	}
	_ = c.Close()
	n := <-received
	elapsed := time.Since(start)
	b.ReportMetric(float64(n)*8/elapsed.Seconds()/1e9, "Gbit/s")
}

// TestNodeReachesPeerPod: a node (or a pod on the host network) of rome,
// whose address is no pod's, reaches milan's pod: rome's gateway sends it
// into the tunnel behind its own pod address, which milan sees remapped
// and answers through the tunnel, and the node gets the answer.
func TestNodeReachesPeerPod(t *testing.T) {
	rome, milan := connected(t)
	nodeOwn := nodeOwnAddress(t, rome)
	echoServer(t, milan.pod, "10.244.1.5:8082")

	want := netip.AddrFrom4([4]byte{10, 72, 1, rome.gwAddr.Addr().As4()[3]}) // rome's gateway as milan sees it
	nodeAsks(t, rome, nodeOwn, "10.71.1.5:8082", want, "milan's pod")
}

// nodeOwnAddress gives rome's node an address outside the pod CIDR, as a
// node's underlay address is, which the gateway pod reaches through the
// node, as pods do.
func nodeOwnAddress(t *testing.T, rome *cluster) netip.Addr {
	t.Helper()
	nodeOwn := netip.MustParseAddr("203.0.113.7")
	lo, err := handle(t, rome.node).LinkByName("lo")
	must(t, err)
	must(t, handle(t, rome.node).AddrAdd(lo, &netlink.Addr{IPNet: netipx(netip.PrefixFrom(nodeOwn, 32))}))
	must(t, handle(t, rome.gw).RouteAdd(&netlink.Route{Dst: netipx(netip.PrefixFrom(nodeOwn, 32)), Gw: nodeAddr.Addr().AsSlice()}))
	return nodeOwn
}

// nodeAsks asks addr from rome's node at nodeOwn until it answers, and
// wants the answer to name want: the source the server saw.
func nodeAsks(t *testing.T, rome *cluster, nodeOwn netip.Addr, addr string, want netip.Addr, what string) {
	t.Helper()
	got := untilAnswered(t, fmt.Sprintf("from rome's node at %s to %s at %s", nodeOwn, what, addr),
		func() (string, error) { return askFrom(rome.node, nodeOwn, addr) })
	if got != want.String() {
		t.Fatalf("%s saw rome's node as %s, want %s (rome's gateway, remapped)", what, got, want)
	}
}

// askFrom is ask from the local address from (any, when from is the zero
// Addr).
func askFrom(ns string, from netip.Addr, addr string) (string, error) {
	var line string
	err := netns.Do(ns, func() error {
		d := net.Dialer{Timeout: 2 * time.Second}
		if from.IsValid() {
			d.LocalAddr = &net.TCPAddr{IP: from.AsSlice()}
		}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			return err
		}
		defer func() { _ = c.Close() }()
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		line, err = bufio.NewReader(c).ReadString('\n')
		return err
	})
	return strings.TrimSpace(line), err
}

// TestNodeReachesPeerPodAtGatewayAddress: milan has a pod at the address
// rome's gateway has in rome, and rome's node reaches it. The gateway sends
// the node's traffic into the tunnel behind that very address, so milan's
// answer comes out of the tunnel with the gateway's own address as its
// source (milan's pod's real one) on its way back to the node: the gateway
// must forward it rather than drop it as a martian source (a packet from
// outside claiming to come from the namespace itself), which it did
// whenever the pod IPs of the two clusters happened to line up that way.
func TestNodeReachesPeerPodAtGatewayAddress(t *testing.T) {
	rome, milan := connected(t)
	nodeOwn := nodeOwnAddress(t, rome)
	h := handle(t, milan.pod)
	eth0, err := h.LinkByName("eth0")
	must(t, err)
	must(t, h.AddrAdd(eth0, &netlink.Addr{IPNet: netipx(rome.gwAddr)}))
	echoServer(t, milan.pod, netip.AddrPortFrom(rome.gwAddr.Addr(), 8083).String())

	at := netip.AddrFrom4([4]byte{10, 71, 1, rome.gwAddr.Addr().As4()[3]})   // rome's view of milan's pod
	want := netip.AddrFrom4([4]byte{10, 72, 1, rome.gwAddr.Addr().As4()[3]}) // rome's gateway as milan sees it
	nodeAsks(t, rome, nodeOwn, netip.AddrPortFrom(at, 8083).String(), want,
		fmt.Sprintf("milan's pod (%s in milan, rome's gateway's own address)", rome.gwAddr.Addr()))
}

// TestLocalIPFromPeerPodAtGatewayAddress: milan's pod at the address
// rome's gateway has in rome reaches rome's host through its twin: the
// request comes out of the tunnel with the gateway's own address as its
// source and leaves toward the host on the gateway's pod link, which the
// kernel refused as a martian source.
func TestLocalIPFromPeerPodAtGatewayAddress(t *testing.T) {
	rome, milan := connected(t)
	echoServer(t, rome.node, netip.AddrPortFrom(apiServerAddr, 6443).String())
	h := handle(t, milan.pod)
	eth0, err := h.LinkByName("eth0")
	must(t, err)
	must(t, h.AddrAdd(eth0, &netlink.Addr{IPNet: netipx(rome.gwAddr)}))
	twin := netip.AddrFrom4([4]byte{10, 73, 0, apiServerTwin.As4()[3]}) // milan's view of rome's 10.70.0.x
	deadline := time.Now().Add(15 * time.Second)
	for {
		got, err := askFrom(milan.pod, rome.gwAddr.Addr(), netip.AddrPortFrom(twin, 6443).String())
		if err == nil {
			if got != rome.gwAddr.Addr().String() {
				t.Fatalf("rome's host saw milan's pod as %s, want rome's gateway %s (masqueraded)", got, rome.gwAddr.Addr())
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("from milan's pod at %s (rome's gateway's own address) to rome's host at %s: %v", rome.gwAddr.Addr(), twin, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
