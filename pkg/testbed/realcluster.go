package testbed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr/funcr"
	"k8s.io/klog/v2"

	"github.com/liqo-go/liqo/pkg/images"
	"github.com/liqo-go/liqo/pkg/proc"
	"github.com/liqo-go/liqo/pkg/testbed/hostpath"
	"github.com/liqo-go/liqo/pkg/testbed/netns"
)

// clusterNet joins a cluster's control plane, which stays on loopback in the
// root namespace, to its real nodes on the underlay:
//   - nodes and pods reach the API server at the cluster's underlay address
//     (the `kubernetes` Service's endpoint), where a forwarder listening
//     inside the underlay dials the API server's loopback port;
//   - the API server reaches kubelets (logs, exec, port-forward) through an
//     egress proxy on a Unix socket that dials into the underlay;
//   - nodes pull images from the cluster's registry on the underlay.
type clusterNet struct {
	apiForward       *forwarder
	egress           *egressProxy
	registry         *images.Registry
	registryLoopback string
	// registryGuard keeps the registry's PrivatePrefix for holders of its
	// password.
	registryGuard images.PrivateRepos
}

// joinUnderlay claims the cluster's slot on the underlay.
func (c *Cluster) joinUnderlay(underlay string) error {
	var routes []netip.Prefix
	for _, cidr := range []string{c.Spec.PodCIDR, c.Spec.ServiceCIDR} {
		p, err := netip.ParsePrefix(cidr)
		if err != nil {
			return fmt.Errorf("cluster %q: %q: %w", c.Name, cidr, err)
		}
		routes = append(routes, p.Masked())
	}
	s, err := joinUnderlay(underlay, routes, slotRecord{Cluster: c.Name, Dir: c.Dir})
	if err != nil {
		return fmt.Errorf("cluster %q: joining the underlay: %w", c.Name, err)
	}
	c.slot = s
	return nil
}

// UnderlayAddress is where the cluster's API server (at its loopback port)
// and registry (port 5000) answer on the underlay, for real nodes and pods
// of every cluster; invalid without real nodes.
func (c *Cluster) UnderlayAddress() netip.Addr {
	if c.slot == nil {
		return netip.Addr{}
	}
	return c.slot.addr()
}

// UnderlayServer is the API server's URL on the underlay, where real
// nodes, pods and other clusters' pods reach it; empty without real nodes.
func (c *Cluster) UnderlayServer() string {
	if c.slot == nil {
		return ""
	}
	return c.underlayServer()
}

// underlayServer is the API server's URL on the underlay.
func (c *Cluster) underlayServer() string {
	return "https://" + net.JoinHostPort(c.slot.addr().String(), strconv.Itoa(c.ports.apiServer))
}

func (c *Cluster) egressSocket() string { return filepath.Join(c.Dir, "egress.sock") }
func (c *Cluster) egressConfig() string { return filepath.Join(c.Dir, "egress-selector.yaml") }

// startClusterNet starts the forwarder, the egress proxy and the registry
// before the API server, which must find its egress socket.
func (c *Cluster) startClusterNet() error {
	if c.slot == nil {
		return nil
	}
	cn := &clusterNet{}
	c.net = cn
	var err error
	var inCluster []netip.Prefix
	for _, cidr := range []string{c.Spec.PodCIDR, c.Spec.ServiceCIDR} {
		if p, err := netip.ParsePrefix(cidr); err == nil {
			inCluster = append(inCluster, p.Masked())
		}
	}
	// The first real node's namespace: it exists once the node starts,
	// before anything in the cluster has an address to dial.
	if cn.egress, err = serveEgressProxy(c.egressSocket(), c.slot.ns(), c.slot.nodeNS(0), inCluster); err != nil {
		return err
	}
	cfg := fmt.Sprintf(`apiVersion: apiserver.k8s.io/v1beta1
kind: EgressSelectorConfiguration
egressSelections:
- name: cluster
  connection:
    proxyProtocol: HTTPConnect
    transport:
      uds:
        udsName: %q
`, c.egressSocket())
	if err := os.WriteFile(c.egressConfig(), []byte(cfg), 0o644); err != nil {
		return err
	}
	apiAddr := net.JoinHostPort(c.slot.addr().String(), strconv.Itoa(c.ports.apiServer))
	l, err := netns.Listen(c.slot.ns(), "tcp", apiAddr)
	if err != nil {
		return fmt.Errorf("listening for the API server on the underlay at %s: %w", apiAddr, err)
	}
	loopback := c.Server[len("https://"):]
	cn.apiForward = serveForward(l, func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", loopback)
	})
	return c.startRegistry()
}

func (c *Cluster) closeAPIForward() {
	if c.net != nil && c.net.apiForward != nil {
		c.net.apiForward.Close()
		c.net.apiForward = nil
	}
}

func (c *Cluster) stopClusterNet() {
	if c.net == nil {
		return
	}
	c.stopRegistry()
	c.closeAPIForward()
	if c.net.egress != nil {
		c.net.egress.Close()
	}
	c.net = nil
}

// startRealNodes starts every real node at once and waits until they are
// Ready, routes their pod CIDRs and runs the cluster DNS (and
// metrics-server, if asked for) on them.
func (c *Cluster) startRealNodes(ctx context.Context) error {
	if c.Spec.RealNodes == 0 {
		return nil
	}
	for i := range c.Spec.RealNodes {
		c.realNodes = append(c.realNodes, c.newRealNode(i))
	}
	start := time.Now()
	errs := make([]error, len(c.realNodes))
	var wg sync.WaitGroup
	for i, n := range c.realNodes {
		wg.Go(func() { errs[i] = c.startRealNode(ctx, n) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("cluster %q: starting real nodes: %w", c.Name, err)
	}
	if err := c.waitFor(ctx, "Ready real nodes", c.waitRealNodesReady); err != nil {
		return err
	}
	c.RealNodesReadyAfter = time.Since(start)
	if err := c.routePodCIDRs(ctx); err != nil {
		return fmt.Errorf("cluster %q: %w", c.Name, err)
	}
	if err := c.deployDNS(ctx); err != nil {
		return fmt.Errorf("cluster %q: %w", c.Name, err)
	}
	if err := c.deployMetricsServer(ctx); err != nil {
		return fmt.Errorf("cluster %q: %w", c.Name, err)
	}
	if err := c.startStorage(); err != nil {
		return fmt.Errorf("cluster %q: %w", c.Name, err)
	}
	return c.waitFor(ctx, "the cluster DNS", c.waitDNSReady)
}

// startStorage runs the cluster's hostPath provisioner, behind its default
// StorageClass, in this process until the cluster stops: the real nodes
// share this host's filesystem. Its log is LogPath("hostpath-provisioner").
func (c *Cluster) startStorage() error {
	f, err := os.OpenFile(c.LogPath("hostpath-provisioner"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	log := funcr.New(func(prefix, args string) { fmt.Fprintln(f, time.Now().Format(time.RFC3339Nano), prefix, args) }, funcr.Options{})
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), log))
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer f.Close()
		if err := hostpath.Run(ctx, c.Config, filepath.Join(c.Dir, "volumes")); err != nil {
			log.Error(err, "the hostPath provisioner stopped")
		}
	}()
	c.stopStorage = func() { cancel(); <-done }
	return nil
}

// stopRealNodes stops every real node at once, and the storage first.
func (c *Cluster) stopRealNodes() {
	if c.stopStorage != nil {
		c.stopStorage()
		c.stopStorage = nil
	}
	var wg sync.WaitGroup
	for _, n := range c.realNodes {
		wg.Go(func() {
			if err := c.stopRealNode(n); err != nil {
				fmt.Fprintf(os.Stderr, "testbed: cluster %s: stopping node %s: %v\n", c.Name, n.name, err)
			}
		})
	}
	wg.Wait()
	c.realNodes = nil
}

// RealNodeUsage sums the memory (RSS, its anonymous and file-backed parts,
// and PSS: pages shared, such as one image's binary in several containers,
// counted once) and CPU time of a real node's own processes: containerd,
// kubelet, kube-proxy and the container shims; with pods, also its
// containers' processes (everything the node runs).
func (c *Cluster) RealNodeUsage(name string, pods bool) (proc.Usage, error) {
	var total proc.Usage
	for _, n := range c.realNodes {
		if n.name != name {
			continue
		}
		groups := []string{n.cgroup + "/system"}
		if pods {
			groups = append(groups, n.cgroup+"/pods")
		}
		for _, g := range groups {
			for pid := range cgroupPIDs(g) {
				u, err := proc.UsageOf(pid)
				if err != nil {
					continue // exited meanwhile
				}
				total.RSS, total.RSSAnon, total.RSSFile = total.RSS+u.RSS, total.RSSAnon+u.RSSAnon, total.RSSFile+u.RSSFile
				total.CPU += u.CPU
				if pss, err := proc.PSSOf(pid); err == nil {
					total.PSS += pss
				}
			}
		}
		return total, nil
	}
	return total, fmt.Errorf("cluster %q has no real node %q", c.Name, name)
}

// RealNodeNames lists the cluster's real nodes.
func (c *Cluster) RealNodeNames() []string {
	var names []string
	for _, n := range c.realNodes {
		names = append(names, n.name)
	}
	return names
}

// DialInNode connects from inside a real node's network namespace (to its
// kubelet's or kube-proxy's loopback endpoints, or to a pod).
func (c *Cluster) DialInNode(ctx context.Context, node, network, addr string) (net.Conn, error) {
	for _, n := range c.realNodes {
		if n.name == node {
			return netns.Dial(ctx, n.ns, network, addr)
		}
	}
	return nil, fmt.Errorf("cluster %q has no real node %q", c.Name, node)
}

// InNode runs fn on a thread inside a real node's network namespace, to
// look at its links, routes and nftables as the node sees them.
func (c *Cluster) InNode(node string, fn func() error) error {
	for _, n := range c.realNodes {
		if n.name == node {
			return netns.Do(n.ns, fn)
		}
	}
	return fmt.Errorf("cluster %q has no real node %q", c.Name, node)
}
