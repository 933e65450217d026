package testbed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/vishvananda/netlink"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/liqo-go/liqo/pkg/testbed/netns"
)

// RealNodeType is the NodeTypeLabel value of real nodes ("kwok" marks the
// simulated ones).
const RealNodeType = "real"

// realNodePrefix names a cluster's real nodes real-0, real-1, ...
const realNodePrefix = "real"

// realNode is a worker node that runs containers: a network namespace on
// the underlay with its own containerd, kubelet and kube-proxy, whose
// processes (and the shims and containers they start) live in the node's
// cgroup.
type realNode struct {
	name   string
	index  int
	ns     string
	ip     netip.Addr
	dir    string
	cgroup string
}

func (c *Cluster) newRealNode(i int) *realNode {
	name := fmt.Sprintf("%s-%d", realNodePrefix, i)
	return &realNode{
		name:   name,
		index:  i,
		ns:     c.slot.nodeNS(i),
		ip:     c.slot.nodeAddr(i),
		dir:    filepath.Join(c.Dir, "nodes", name),
		cgroup: c.slot.cgroup() + "/" + name,
	}
}

// Components of a real node, as named in logs: "<node>-<component>".
const (
	Containerd = "containerd"
	Kubelet    = "kubelet"
	KubeProxy  = "kube-proxy"
)

func (n *realNode) component(what string) string { return n.name + "-" + what }

// setupNetwork makes the node's namespace: a veth to the underlay bridge
// with the node's address, forwarding on, bridged pod traffic through the
// firewall (kube-proxy's Service rules apply between pods of one node), and
// masquerading of pod traffic that leaves the cluster's pod CIDR, so a pod
// reaching another cluster's NodePort gets answered at its node's address.
func (n *realNode) setupNetwork(underlayNS, podCIDR string) error {
	if err := netns.Create(n.ns); err != nil {
		return err
	}
	fd, err := netns.Fd(n.ns)
	if err != nil {
		return err
	}
	defer closeFd(fd)
	ul, err := netns.Netlink(underlayNS)
	if err != nil {
		return err
	}
	defer ul.Close()
	br, err := ul.LinkByName(underlayBridge)
	if err != nil {
		return fmt.Errorf("the underlay bridge: %w", err)
	}
	hostEnd := vethName(n.ns)
	veth := &netlink.Veth{
		LinkAttrs:     netlink.LinkAttrs{Name: hostEnd, MasterIndex: br.Attrs().Index},
		PeerName:      "eth0",
		PeerNamespace: netlink.NsFd(fd),
	}
	if err := ul.LinkAdd(veth); err != nil {
		return fmt.Errorf("creating the veth of node %s: %w", n.name, err)
	}
	if err := ul.LinkSetUp(veth); err != nil {
		return err
	}
	h, err := netns.Netlink(n.ns)
	if err != nil {
		return err
	}
	defer h.Close()
	eth, err := h.LinkByName("eth0")
	if err != nil {
		return err
	}
	addr := &netlink.Addr{IPNet: &net.IPNet{IP: n.ip.AsSlice(), Mask: net.CIDRMask(underlayNet.Bits(), 32)}}
	if err := h.AddrAdd(eth, addr); err != nil {
		return fmt.Errorf("addressing node %s: %w", n.name, err)
	}
	if err := h.LinkSetUp(eth); err != nil {
		return err
	}
	// Bridged pod traffic goes through the firewall only with br_netfilter;
	// load it if this machine has not (a no-op where it is built in).
	if _, err := os.Stat("/proc/sys/net/bridge"); err != nil {
		_ = exec.Command("modprobe", "br_netfilter").Run()
	}
	for key, value := range map[string]string{
		"ipv4/ip_forward":                "1",
		"bridge/bridge-nf-call-iptables": "1",
	} {
		if err := netns.Sysctl(n.ns, key, value); err != nil {
			return fmt.Errorf("node %s: setting net.%s: %w (is the br_netfilter module loaded?)", n.name, strings.ReplaceAll(key, "/", "."), err)
		}
	}
	rules := fmt.Sprintf(`table ip liqo-testbed {
	chain postrouting {
		type nat hook postrouting priority srcnat; policy accept;
		ip saddr %[1]s ip daddr != %[1]s oifname "eth0" masquerade
	}
}
`, podCIDR)
	cmd := exec.Command("nsenter", "--net="+netns.Path(n.ns), "--", "nft", "-f", "-")
	cmd.Stdin = strings.NewReader(rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("node %s: the masquerade rule: %w: %s", n.name, err, out)
	}
	return nil
}

// vethName names the underlay end of a node's veth after its namespace
// ("lqtb-<underlay>-s<slot>-<i>" → "<underlay>s<slot>n<i>"), within the
// 15 bytes a link name may have.
func vethName(ns string) string {
	parts := strings.Split(strings.TrimPrefix(ns, netnsPrefix), "-")
	name := strings.Join(parts[:len(parts)-1], "") + "n" + parts[len(parts)-1]
	if len(name) > 15 {
		name = name[len(name)-15:]
	}
	return name
}

func closeFd(fd int) { _ = os.NewFile(uintptr(fd), "netns").Close() }

// startRealNode prepares and starts one node's containerd, kubelet and
// kube-proxy.
func (c *Cluster) startRealNode(ctx context.Context, n *realNode) error {
	raiseInotifyInstances()
	if err := createCgroup(n.cgroup + "/system"); err != nil {
		return err
	}
	if err := createCgroup(n.cgroup + "/pods"); err != nil {
		return err
	}
	if err := n.setupNetwork(c.slot.ns(), c.Spec.PodCIDR); err != nil {
		return err
	}
	if err := n.writeConfigs(c); err != nil {
		return fmt.Errorf("node %s: %w", n.name, err)
	}
	start := func(what, bin string, args []string) error {
		p := &process{name: n.component(what), bin: bin, args: args, logPath: c.LogPath(n.component(what)),
			netns: n.ns, cgroup: n.cgroup + "/system"}
		if err := p.start(); err != nil {
			return fmt.Errorf("cluster %q: %w", c.Name, err)
		}
		c.mu.Lock()
		c.procs[p.name] = p
		c.mu.Unlock()
		return nil
	}
	if err := start(Containerd, "containerd", []string{"--config", n.path("containerd.toml")}); err != nil {
		return err
	}
	if err := c.waitFor(ctx, "containerd of node "+n.name, func(ctx context.Context) error {
		conn, err := net.Dial("unix", n.containerdSocket())
		if err != nil {
			return err
		}
		return conn.Close()
	}); err != nil {
		return err
	}
	if err := start(Kubelet, c.bins.Kubelet, n.kubeletArgs()); err != nil {
		return err
	}
	return start(KubeProxy, c.bins.KubeProxy, []string{"--config=" + n.path("kube-proxy.yaml"), "--v=1"})
}

// stopRealNode stops the node's processes, then kills whatever is left in
// its cgroup (shims, containers), unmounts everything below its directory
// and deletes its namespace, with its links and rules.
func (c *Cluster) stopRealNode(n *realNode) error {
	for _, what := range []string{KubeProxy, Kubelet, Containerd} {
		c.StopComponent(n.component(what))
	}
	return errors.Join(
		removeCgroupTree(n.cgroup),
		unmountUnder(n.dir),
		netns.Delete(n.ns),
	)
}

// waitRealNodesReady is true once every real node is Ready with a pod CIDR.
func (c *Cluster) waitRealNodesReady(ctx context.Context) error {
	nodes, err := c.Client().CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: NodeTypeLabel + "=" + RealNodeType})
	if err != nil {
		return err
	}
	ready := 0
	for _, n := range nodes.Items {
		if NodeReady(&n) && n.Spec.PodCIDR != "" {
			ready++
		}
	}
	if ready < len(c.realNodes) {
		return fmt.Errorf("%d of %d real nodes Ready", ready, len(c.realNodes))
	}
	return nil
}

// routePodCIDRs labels the real nodes' role and gives every real node a route to each other real node's pod
// CIDR through that node's underlay address: pod routes exist only inside a
// cluster, as with a real cluster's CNI. Each node also gets a route for
// the service CIDR on its underlay link, as a real node's default route
// would give: a connection from the node itself (a hostNetwork pod to
// the kubernetes Service) needs a route before kube-proxy's DNAT rewrites
// its destination.
func (c *Cluster) routePodCIDRs(ctx context.Context) error {
	list, err := c.Client().CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: NodeTypeLabel + "=" + RealNodeType})
	if err != nil {
		return err
	}
	byName := map[string]corev1.Node{}
	for _, n := range list.Items {
		byName[n.Name] = n
		if n.Labels["kubernetes.io/role"] == "" {
			patch := []byte(`{"metadata":{"labels":{"kubernetes.io/role":"agent"}}}`)
			if _, err := c.Client().CoreV1().Nodes().Patch(ctx, n.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				return fmt.Errorf("labelling node %s: %w", n.Name, err)
			}
		}
	}
	_, svc, err := net.ParseCIDR(c.Spec.ServiceCIDR)
	if err != nil {
		return fmt.Errorf("service CIDR %q: %w", c.Spec.ServiceCIDR, err)
	}
	for _, from := range c.realNodes {
		h, err := netns.Netlink(from.ns)
		if err != nil {
			return err
		}
		link, err := h.LinkByName("eth0")
		if err == nil {
			err = h.RouteReplace(&netlink.Route{Dst: svc, LinkIndex: link.Attrs().Index, Scope: netlink.SCOPE_LINK})
		}
		if err != nil {
			h.Close()
			return fmt.Errorf("routing the service CIDR %s on node %s: %w", svc, from.name, err)
		}
		for _, to := range c.realNodes {
			if to == from {
				continue
			}
			_, dst, err := net.ParseCIDR(byName[to.name].Spec.PodCIDR)
			if err != nil {
				h.Close()
				return fmt.Errorf("node %s has no pod CIDR: %w", to.name, err)
			}
			if err := h.RouteReplace(&netlink.Route{Dst: dst, Gw: to.ip.AsSlice()}); err != nil {
				h.Close()
				return fmt.Errorf("routing %s via node %s: %w", dst, to.name, err)
			}
		}
		h.Close()
	}
	return nil
}
