package testbed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/liqo-go/liqo/pkg/proc"
)

// Cluster is one running testbed cluster.
type Cluster struct {
	Name string
	Spec ClusterSpec
	// Dir holds the cluster's PKI, etcd data, configuration and logs.
	Dir string
	// Kubeconfig is the path of an admin kubeconfig (credentials embedded).
	Kubeconfig string
	// Server is the API server URL.
	Server string
	// Config is an admin REST config for Go clients.
	Config *rest.Config
	// RealNodesReadyAfter is how long the real nodes took from the start
	// of their processes to Ready with a pod CIDR (zero without real nodes).
	RealNodesReadyAfter time.Duration

	bins  *Binaries
	pki   *pki
	ports clusterPorts

	mu    sync.Mutex
	procs map[string]*process
	// stopping is set once Stop begins: what Supervise runs is not started
	// again after that.
	stopping bool

	// The real nodes and what joins them to the control plane; all nil
	// without real nodes.
	slot      *slot
	realNodes []*realNode
	net       *clusterNet
	// stopStorage stops the hostPath provisioner (startStorage).
	stopStorage func()
	// pinned is the cpuset cgroup of PinCPUs, if any.
	pinned string
}

// Client returns a new admin clientset.
func (c *Cluster) Client() kubernetes.Interface { return kubernetes.NewForConfigOrDie(c.Config) }

// KubectlPath is the kubectl binary matching the cluster's version.
func (c *Cluster) KubectlPath() string { return c.bins.Kubectl }

// LogPath is the log file of a component (Etcd, APIServer, ...).
func (c *Cluster) LogPath(component string) string {
	return filepath.Join(c.Dir, "logs", component+".log")
}

// PIDs returns the process id of every running component, by name.
func (c *Cluster) PIDs() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	pids := map[string]int{}
	for name, p := range c.procs {
		if p.running() {
			pids[name] = p.pid()
		}
	}
	return pids
}

// Ports returns every loopback port the cluster's components listen on.
func (c *Cluster) Ports() []int { return c.ports.list() }

// newCluster prepares the cluster's directory, ports, PKI and kubeconfig.
func newCluster(spec ClusterSpec, dir string, bins *Binaries, underlay string) (*Cluster, error) {
	c := &Cluster{Name: spec.Name, Spec: spec, Dir: dir, bins: bins, procs: map[string]*process{}}
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		return nil, err
	}
	if err := c.allocatePorts(); err != nil {
		return nil, err
	}
	var extraIPs []net.IP
	if spec.RealNodes > 0 {
		if err := c.joinUnderlay(underlay); err != nil {
			c.release()
			return nil, err
		}
		extraIPs = append(extraIPs, c.slot.addr().AsSlice())
	}
	_, svcNet, err := net.ParseCIDR(spec.ServiceCIDR)
	if err != nil {
		c.release()
		return nil, fmt.Errorf("cluster %q: service CIDR %q: %w", spec.Name, spec.ServiceCIDR, err)
	}
	if _, _, err := net.ParseCIDR(spec.PodCIDR); err != nil {
		c.release()
		return nil, fmt.Errorf("cluster %q: pod CIDR %q: %w", spec.Name, spec.PodCIDR, err)
	}
	firstSvcIP := append(net.IP(nil), svcNet.IP.To4()...)
	firstSvcIP[3]++
	if c.pki, err = newPKI(filepath.Join(dir, "pki"), spec.Name, append(extraIPs, firstSvcIP)...); err != nil {
		c.release()
		return nil, fmt.Errorf("cluster %q: creating PKI: %w", spec.Name, err)
	}
	if err := errors.Join(c.writeKwokDebugConfig(), c.writeKwokGatewayConfig()); err != nil {
		c.release()
		return nil, fmt.Errorf("cluster %q: %w", spec.Name, err)
	}
	c.Server = fmt.Sprintf("https://127.0.0.1:%d", c.ports.apiServer)
	c.Kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := c.writeKubeconfig(c.Kubeconfig); err != nil {
		c.release()
		return nil, err
	}
	c.Config = &rest.Config{
		Host: c.Server,
		TLSClientConfig: rest.TLSClientConfig{
			CAData: c.pki.caPEM, CertData: c.pki.adminCertPEM, KeyData: c.pki.adminKeyPEM,
		},
		QPS: 1000, Burst: 2000,
	}
	return c, nil
}

func (c *Cluster) allocatePorts() error {
	var err error
	if c.Spec.APIServerPort != 0 {
		if err = claimPort(c.Spec.APIServerPort, fmt.Sprintf("cluster %q's API server", c.Name)); err != nil {
			return err
		}
		c.ports.apiServer = c.Spec.APIServerPort
	} else if c.ports.apiServer, err = freePort(); err != nil {
		return err
	}
	ports := []*int{&c.ports.etcdClient, &c.ports.etcdPeer, &c.ports.kwok}
	if c.Spec.APIServerProfiling {
		ports = append(ports, &c.ports.controllerManager)
	}
	for _, p := range ports {
		if *p, err = freePort(); err != nil {
			c.release()
			return err
		}
	}
	return nil
}

// ControllerManagerPprofURL is where the controller manager serves
// /debug/pprof (over TLS, self-signed), empty unless the cluster was made
// with APIServerProfiling.
func (c *Cluster) ControllerManagerPprofURL() string {
	if c.ports.controllerManager == 0 {
		return ""
	}
	return fmt.Sprintf("https://127.0.0.1:%d/debug/pprof", c.ports.controllerManager)
}

func (c *Cluster) release() {
	if c.slot != nil {
		_ = c.slot.leave()
		c.slot = nil
	}
	var used []int
	for _, p := range c.ports.list() {
		if p != 0 {
			used = append(used, p)
		}
	}
	releasePorts(used)
}

// CAFile is the PEM file of the cluster's CA, which signs, among others,
// the client certificate its API server presents to admission webhooks
// (WebhookClientName).
func (c *Cluster) CAFile() string { return c.pki.caFile() }

// WriteKubeconfig writes an admin kubeconfig whose context is named after the
// cluster, with every credential embedded so the file can be copied.
func (c *Cluster) WriteKubeconfig(path string) error { return c.writeKubeconfig(path) }

func (c *Cluster) writeKubeconfig(path string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[c.Name] = &clientcmdapi.Cluster{Server: c.Server, CertificateAuthorityData: c.pki.caPEM}
	cfg.AuthInfos[c.Name+"-admin"] = &clientcmdapi.AuthInfo{
		ClientCertificateData: c.pki.adminCertPEM, ClientKeyData: c.pki.adminKeyPEM,
	}
	cfg.Contexts[c.Name] = &clientcmdapi.Context{Cluster: c.Name, AuthInfo: c.Name + "-admin", Namespace: "default"}
	cfg.CurrentContext = c.Name
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}

// start runs every component in dependency order and waits until the
// cluster can run pods.
func (c *Cluster) start(ctx context.Context) error {
	if err := c.startClusterNet(); err != nil {
		return fmt.Errorf("cluster %q: %w", c.Name, err)
	}
	steps := []struct {
		component string
		ready     func(context.Context) error
	}{
		{Etcd, c.waitEtcd},
		{APIServer, c.waitAPIServer},
		{ControllerManager, nil},
		{Scheduler, nil},
		{Kwok, nil},
	}
	for _, s := range steps {
		if err := c.StartComponent(s.component); err != nil {
			return err
		}
		if s.ready != nil {
			if err := c.waitFor(ctx, s.component, s.ready); err != nil {
				return err
			}
		}
	}
	if err := c.bindKubeletClient(ctx); err != nil {
		return fmt.Errorf("cluster %q: %w", c.Name, err)
	}
	// Real nodes register first, so the first one gets the first pod CIDR
	// (10.244.0.0/24) in every cluster: pod IPs of clusters overlap.
	if err := c.startRealNodes(ctx); err != nil {
		return err
	}
	if err := c.createNodes(ctx); err != nil {
		return fmt.Errorf("cluster %q: creating simulated nodes: %w", c.Name, err)
	}
	return c.waitFor(ctx, "the default ServiceAccount and Ready nodes", c.waitWorkloadReady)
}

// StartComponent (re)starts one control-plane component; it is a no-op if
// the component is running. Tests use it with StopComponent to simulate
// outages.
func (c *Cluster) StartComponent(name string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.procs[name]; p != nil && p.running() {
		return nil
	}
	var bin string
	var args []string
	switch name {
	case Etcd:
		bin, args = c.bins.Etcd, c.etcdArgs()
	case APIServer:
		bin, args = c.bins.APIServer, c.apiServerArgs()
	case ControllerManager:
		bin, args = c.bins.ControllerManager, c.controllerManagerArgs()
	case Scheduler:
		var err error
		if args, err = c.schedulerArgs(); err != nil {
			return err
		}
		bin = c.bins.Scheduler
	case Kwok:
		bin, args = c.bins.Kwok, c.kwokArgs(c.bins.KwokStages)
	default:
		return fmt.Errorf("cluster %q has no component %q", c.Name, name)
	}
	p := &process{name: name, bin: bin, args: args, logPath: c.LogPath(name)}
	if err := p.start(); err != nil {
		return fmt.Errorf("cluster %q: %w", c.Name, err)
	}
	c.procs[name] = p
	return nil
}

// StopComponent stops one component and waits for it to exit.
func (c *Cluster) StopComponent(name string) {
	c.mu.Lock()
	p := c.procs[name]
	c.mu.Unlock()
	if p != nil {
		p.stop(10 * time.Second)
	}
}

// stopOrder stops dependents before what they depend on, so shutdown logs
// stay free of spurious connection errors.
var stopOrder = []string{Kwok, Scheduler, ControllerManager, APIServer, Etcd}

// Stop ends every process of the cluster and frees its ports. It does not
// remove the cluster's directory; Testbed.Stop does.
func (c *Cluster) Stop() {
	c.stopRealNodes()
	// Relayed connections whose pods died with their namespace never see a
	// FIN: close them, or the API server's graceful shutdown waits on their
	// watches until it is killed.
	c.closeAPIForward()
	// What Supervise runs (our components) goes before the control plane,
	// and is not started again.
	c.mu.Lock()
	c.stopping = true
	var extra []string
	for name := range c.procs {
		if !slices.Contains(stopOrder, name) {
			extra = append(extra, name)
		}
	}
	c.mu.Unlock()
	for _, name := range append(extra, stopOrder...) {
		c.StopComponent(name)
	}
	if err := c.unpin(); err != nil {
		fmt.Fprintf(os.Stderr, "testbed: cluster %s: %v\n", c.Name, err)
	}
	c.stopClusterNet()
	c.release()
}

// waitFor polls ready until it succeeds, failing fast with the component's
// log if any component exits meanwhile.
func (c *Cluster) waitFor(ctx context.Context, what string, ready func(context.Context) error) error {
	var last error
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := c.exitedComponent(); err != nil {
			return false, fmt.Errorf("cluster %q: waiting for %s: %w", c.Name, what, err)
		}
		attempt, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		last = ready(attempt)
		return last == nil, nil
	})
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return fmt.Errorf("cluster %q: timed out waiting for %s: %w (last error: %v)", c.Name, what, ctx.Err(), last)
	}
	return err
}

// exitedComponent reports the first component that has died.
func (c *Cluster) exitedComponent() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make([]string, 0, len(c.procs))
	for name := range c.procs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if p := c.procs[name]; !p.running() {
			return p.exitError()
		}
	}
	return nil
}

// DumpLogs writes the last lines of every component's log to w.
func (c *Cluster) DumpLogs(w io.Writer, lines int) {
	names := []string{}
	c.mu.Lock()
	for name := range c.procs {
		names = append(names, name)
	}
	c.mu.Unlock()
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(w, "===== cluster %s: %s (%s) =====\n%s\n", c.Name, name, c.LogPath(name), proc.TailFile(c.LogPath(name), lines))
	}
}
