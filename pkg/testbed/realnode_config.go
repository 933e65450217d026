package testbed

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// The files of one real node, all below its directory so that removing the
// directory (after its mounts) leaves nothing behind.
func (n *realNode) path(parts ...string) string {
	return filepath.Join(append([]string{n.dir}, parts...)...)
}

func (n *realNode) containerdSocket() string { return n.path("containerd.sock") }

// The pause image containerd runs as every pod's sandbox, served by the
// testbed's registry (nothing can be pulled from outside).
const pauseImage = "registry.k8s.io/pause:3.10"

// writeConfigs writes containerd's, the CNI template's, the kubelet's and
// kube-proxy's configuration and credentials.
func (n *realNode) writeConfigs(c *Cluster) error {
	for _, d := range []string{"containerd", "cni/net.d", "cni/ipam", "kubelet", "pod-logs", "certs.d", "volume-plugins"} {
		if err := os.MkdirAll(n.path(d), 0o755); err != nil {
			return err
		}
	}
	files := map[string]string{
		"containerd.toml":  n.containerdConfig(),
		"cni/template":     n.cniTemplate(c.Spec.PodCIDR),
		"kubelet.yaml":     n.kubeletConfig(c),
		"kube-proxy.yaml":  n.kubeProxyConfig(c),
		"resolv.conf":      "# pods with dnsPolicy Default resolve nothing outside the cluster\noptions ndots:1\n",
		"certs.d/hosts.md": "one folder per mirrored registry, each pointing at the testbed's registry, and one for that registry by its own name\n",
	}
	for _, upstream := range mirroredRegistries {
		files["certs.d/"+upstream+"/hosts.toml"] = registryHosts(c.registryAddr())
	}
	// The registry by its own name, for the images named after it (the
	// private ones: see NodeRegistryAddr): containerd would otherwise
	// speak HTTPS to it.
	files["certs.d/"+c.registryAddr()+"/hosts.toml"] = registryHosts(c.registryAddr())
	for name, content := range files {
		if err := os.MkdirAll(filepath.Dir(n.path(name)), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(n.path(name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	return n.writeCredentials(c)
}

// mirroredRegistries are served by the testbed's registry, so manifests
// written for real clusters (image: busybox) run unchanged.
var mirroredRegistries = []string{"docker.io", "registry.k8s.io", "ghcr.io", "quay.io"}

// registryHosts points containerd at the testbed's registry only: with the
// upstream as the server, a missing image would make containerd try the
// internet after the mirror.
func registryHosts(addr string) string {
	return fmt.Sprintf("server = %q\n\n[host.%q]\n  capabilities = [\"pull\", \"resolve\"]\n", "http://"+addr, "http://"+addr)
}

func (n *realNode) containerdConfig() string {
	return fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
# Snapshotters and tracing this machine does not have or need.
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = %[3]q

[ttrpc]
  address = %[4]q

[plugins."io.containerd.internal.v1.opt"]
  path = %[5]q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[6]q
  # The machine lacks CAP_SYS_RESOURCE: runc cannot lower oom_score_adj.
  restrict_oom_score_adj = true
  # Pod network namespaces below the node's directory, not in /run/netns.
  netns_mounts_under_state_dir = true
  disable_apparmor = true
  stream_server_address = "127.0.0.1"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[7]q
    conf_dir = %[8]q
    # Rendered once the kubelet passes the node's pod CIDR.
    conf_template = %[9]q
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = %[10]q
`, n.path("containerd", "root"), n.path("containerd", "state"), n.containerdSocket(), n.containerdSocket()+".ttrpc",
		n.path("containerd", "opt"), pauseImage, cniBinDir, n.path("cni", "net.d"), n.path("cni", "template"), n.path("certs.d"))
}

// cniBinDir is where Debian's containernetworking-plugins are.
const cniBinDir = "/usr/lib/cni"

// cniTemplate: a bridge per node with host-local addresses from the node's
// pod CIDR (the controller manager allocates it; containerd fills it in),
// state kept in the node's own directory (two nodes of two clusters can have
// the same pod CIDR), and no masquerading by the plugin: the node's own rule
// masquerades only traffic that leaves the cluster's pod CIDR.
func (n *realNode) cniTemplate(clusterCIDR string) string {
	return fmt.Sprintf(`{
  "cniVersion": "0.4.0",
  "name": "liqo-testbed",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni0",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": %q,
        "ranges": [{{range $i, $r := .PodCIDRRanges}}{{if $i}}, {{end}}[{"subnet": "{{$r}}"}]{{end}}],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`, n.path("cni", "ipam"))
}

// Cluster DNS address and domain, as kubeadm sets them.
const (
	clusterDomain = "cluster.local"
	dnsServiceIP  = "10.96.0.10"
)

func (n *realNode) kubeletConfig(c *Cluster) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %[1]s
port: %[2]d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: %[3]q
authorization:
  mode: Webhook
tlsCertFile: %[4]q
tlsPrivateKeyFile: %[5]q
cgroupDriver: cgroupfs
cgroupRoot: %[6]q
cgroupsPerQOS: true
enforceNodeAllocatable: ["pods"]
containerRuntimeEndpoint: %[7]q
clusterDNS: [%[8]q]
clusterDomain: %[9]s
resolvConf: %[10]q
podLogsDir: %[11]q
volumePluginDir: %[12]q
failSwapOn: false
# Kernel tunables are the machine's, shared by every node: leave them alone.
protectKernelDefaults: false
# Every node sees the whole machine's disk, shared with everything else
# on it (build caches, other clusters): a nearly full disk there is no
# pressure of this node's pods, and evicting them (or tainting the node)
# would only fail the tests. "0%%" turns a signal off.
evictionHard:
  memory.available: "100Mi"
  nodefs.available: "0%%"
  nodefs.inodesFree: "0%%"
  imagefs.available: "0%%"
  imagefs.inodesFree: "0%%"
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
maxPods: 110
`, n.ip, kubeletPort, c.pki.caFile(), n.path("kubelet.crt"), n.path("kubelet.key"), "/"+n.cgroup+"/pods",
		"unix://"+n.containerdSocket(), dnsServiceIP, clusterDomain, n.path("resolv.conf"), n.path("pod-logs"), n.path("volume-plugins"))
}

const kubeletPort = 10250

func (n *realNode) kubeletArgs() []string {
	return []string{
		"--config=" + n.path("kubelet.yaml"),
		"--kubeconfig=" + n.path("kubelet.kubeconfig"),
		"--root-dir=" + n.path("kubelet"),
		"--cert-dir=" + n.path("kubelet", "pki"),
		"--hostname-override=" + n.name,
		"--node-ip=" + n.ip.String(),
		// kubernetes.io/role (the ROLES column) is not a label a kubelet may
		// set on itself: the testbed adds it once the node is registered.
		"--node-labels=" + NodeTypeLabel + "=" + RealNodeType,
		"--v=1",
	}
}

func (n *realNode) kubeProxyConfig(c *Cluster) string {
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: %[1]q
hostnameOverride: %[2]s
mode: %[3]s
clusterCIDR: %[4]s
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses: ["primary"]
# The conntrack table is the machine's: kube-proxy must not resize it.
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
`, n.path("kube-proxy.kubeconfig"), n.name, c.Spec.ProxyMode, c.Spec.PodCIDR)
}

// writeCredentials issues the kubelet's client and serving certificates and
// kube-proxy's client certificate, and their kubeconfigs. Nodes reach the
// API server on the underlay, through the cluster's forwarder.
func (n *realNode) writeCredentials(c *Cluster) error {
	serving := &x509.Certificate{
		Subject:     pkix.Name{CommonName: n.name},
		DNSNames:    []string{n.name},
		IPAddresses: []net.IP{n.ip.AsSlice()},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if _, _, err := c.pki.issue(serving, n.path("kubelet.crt"), n.path("kubelet.key")); err != nil {
		return err
	}
	clients := []struct {
		file, user string
		groups     []string
	}{
		{"kubelet.kubeconfig", "system:node:" + n.name, []string{"system:nodes"}},
		{"kube-proxy.kubeconfig", "system:kube-proxy", nil},
	}
	for _, cl := range clients {
		tmpl := &x509.Certificate{
			Subject:     pkix.Name{CommonName: cl.user, Organization: cl.groups},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}
		base := strings.TrimSuffix(cl.file, ".kubeconfig")
		certPEM, keyPEM, err := c.pki.issue(tmpl, n.path(base+"-client.crt"), n.path(base+"-client.key"))
		if err != nil {
			return err
		}
		cfg := clientcmdapi.NewConfig()
		cfg.Clusters["cluster"] = &clientcmdapi.Cluster{Server: c.underlayServer(), CertificateAuthorityData: c.pki.caPEM}
		cfg.AuthInfos["user"] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
		cfg.Contexts["default"] = &clientcmdapi.Context{Cluster: "cluster", AuthInfo: "user"}
		cfg.CurrentContext = "default"
		if err := clientcmd.WriteToFile(*cfg, n.path(cl.file)); err != nil {
			return err
		}
	}
	return nil
}
