package fabric

import (
	"bufio"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/json"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	vns "github.com/vishvananda/netns"

	"github.com/liqo-go/liqo/pkg/gateway"
	"github.com/liqo-go/liqo/pkg/testbed/netns"
)

// cluster is one side: the names of its namespaces.
type cluster struct {
	name          string
	gw, node, pod string
	underlay      netip.Addr
	// gwAddr is the gateway pod's address on the node's bridge.
	gwAddr          netip.Prefix
	private, public []byte
}

var (
	podCIDR  = netip.MustParsePrefix("10.244.0.0/16")
	nodeCIDR = netip.MustParsePrefix("10.244.1.0/24")
	podAddr  = netip.MustParsePrefix("10.244.1.5/24")
	nodeAddr = netip.MustParsePrefix("10.244.1.1/24")
	// gwPodAddr is rome's gateway's pod address; milan's gateway has the
	// next one, so that milan can have a pod at rome's gateway's address.
	gwPodAddr = netip.MustParsePrefix("10.244.1.2/24")
	// externalCIDR is each cluster's external CIDR; apiServerAddr is a
	// host of rome's that is not a pod, given the twin apiServerTwin there.
	externalCIDR  = netip.MustParsePrefix("10.70.0.0/16")
	apiServerAddr = netip.MustParseAddr("192.0.2.10")
	apiServerTwin = netip.MustParseAddr("10.70.0.1")
	underlayNet   = 24
)

func keyPair(t testing.TB) ([]byte, []byte) {
	k, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k.Bytes(), k.PublicKey().Bytes()
}

// newNS creates a namespace deleted at the end of the test.
func newNS(t testing.TB, name string) string {
	t.Helper()
	if err := netns.Create(name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = netns.Delete(name) })
	return name
}

func handle(t testing.TB, ns string) *netlink.Handle {
	t.Helper()
	h, err := netns.Netlink(ns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h
}

// veth joins namespaces a and b with a pair named an (in a) and bn (in b);
// it returns nothing, the ends are looked up by name.
func veth(t testing.TB, a, an, b, bn string) {
	t.Helper()
	fd, err := vns.GetFromPath(netns.Path(b))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = fd.Close() }()
	if err := handle(t, a).LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: an}, PeerName: bn, PeerNamespace: netlink.NsFd(int(fd))}); err != nil {
		t.Fatalf("veth %s/%s - %s/%s: %v", a, an, b, bn, err)
	}
}

func up(t testing.TB, ns, link string, addr netip.Prefix, master string) {
	t.Helper()
	h := handle(t, ns)
	l, err := h.LinkByName(link)
	if err != nil {
		t.Fatal(err)
	}
	if addr.IsValid() {
		if err := h.AddrAdd(l, &netlink.Addr{IPNet: netipx(addr)}); err != nil {
			t.Fatal(err)
		}
	}
	if master != "" {
		br, err := h.LinkByName(master)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.LinkSetMaster(l, br); err != nil {
			t.Fatal(err)
		}
	}
	if err := h.LinkSetUp(l); err != nil {
		t.Fatal(err)
	}
}

func bridge(t testing.TB, ns, name string, addr netip.Prefix) {
	t.Helper()
	if err := handle(t, ns).LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: name}}); err != nil {
		t.Fatal(err)
	}
	up(t, ns, name, addr, "")
}

// build makes the namespaces of one cluster: a pod on the node's bridge, a
// gateway pod on the same bridge with a second leg on the internet bridge.
func build(t testing.TB, prefix, name, inet string, underlay netip.Addr) *cluster {
	c := &cluster{name: name, underlay: underlay,
		gw: newNS(t, prefix+name+"-gw"), node: newNS(t, prefix+name+"-node"), pod: newNS(t, prefix+name+"-pod")}
	c.private, c.public = keyPair(t)
	c.gwAddr = gwPodAddr
	if name == "milan" {
		c.gwAddr = netip.PrefixFrom(gwPodAddr.Addr().Next(), gwPodAddr.Bits())
	}
	bridge(t, c.node, "cni0", nodeAddr)
	if err := netns.Sysctl(c.node, "ipv4/ip_forward", "1"); err != nil {
		t.Fatal(err)
	}
	veth(t, c.pod, "eth0", c.node, "vpod")
	up(t, c.pod, "eth0", podAddr, "")
	up(t, c.node, "vpod", netip.Prefix{}, "cni0")
	if err := handle(t, c.pod).RouteAdd(&netlink.Route{Gw: nodeAddr.Addr().AsSlice()}); err != nil {
		t.Fatal(err)
	}
	veth(t, c.gw, "eth0", c.node, "vgw")
	up(t, c.gw, "eth0", c.gwAddr, "")
	up(t, c.node, "vgw", netip.Prefix{}, "cni0")
	veth(t, c.gw, "ul", inet, "v"+name)
	up(t, c.gw, "ul", netip.PrefixFrom(underlay, underlayNet), "")
	up(t, inet, "v"+name, netip.Prefix{}, "br0")
	return c
}

// gatewayProcess runs the gateway in c's gateway namespace until the test
// ends; it fails the test unless the gateway removed everything it added.
func gatewayProcess(t testing.TB, c *cluster, k *gateway.Kernel, s gateway.State) {
	t.Helper()
	cfg, err := json.Marshal(childConfig{Kernel: k, State: s})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("nsenter", "--net="+netns.Path(c.gw), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(cfg))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != "ready" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("gateway %s: %q", c.name, lines.Text())
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		rest, _ := io.ReadAll(stdout)
		_ = cmd.Wait()
		if !strings.Contains(lines.Text()+string(rest), "closed") {
			t.Errorf("gateway %s did not close cleanly: %s", c.name, rest)
		}
	})
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func netipx(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), 32)}
}
