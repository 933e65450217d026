package testbed

import (
	"fmt"
	"regexp"

	corev1 "k8s.io/api/core/v1"
)

// ClusterSpec describes one testbed cluster. Zero values mean defaults.
type ClusterSpec struct {
	// Name is a DNS label, unique within a testbed.
	Name string
	// Nodes are the simulated worker node pools; one pool of DefaultNodePool
	// if empty.
	Nodes []NodePool
	// PodCIDR is the cluster CIDR nodes get their pod ranges from
	// (10.244.0.0/16: the same in every cluster, like independent clusters).
	PodCIDR string
	// ServiceCIDR is the service cluster IP range (10.96.0.0/16).
	ServiceCIDR string
	// RealNodes is the number of real nodes (real-0, real-1, ...): kubelet,
	// containerd, CNI and kube-proxy in a network namespace each, running
	// real containers. They need root; see RealNodesSupported.
	RealNodes int
	// MetricsServer runs metrics-server on the real nodes, behind the
	// metrics.k8s.io API (kubectl top); it needs real nodes.
	MetricsServer bool
	// ProxyMode is kube-proxy's mode on real nodes: nftables (default) or
	// iptables.
	ProxyMode string
	// APIServerPort fixes the API server's loopback port; a free one if 0.
	APIServerPort int
	// ControllerManager and Scheduler client rate limits: 0 keeps the upstream
	// defaults (QPS 20/burst 30 and QPS 50/burst 100), so benchmarks can
	// compare throttled and unthrottled control planes.
	ControllerManagerQPS   float32
	ControllerManagerBurst int
	SchedulerQPS           float32
	SchedulerBurst         int
	// APIServerProfiling serves the API server's /debug/pprof (to its
	// admin), and the controller manager's on a loopback port of its own
	// (Cluster.ControllerManagerPprofURL), for benchmarks that profile
	// where the control plane's work goes.
	APIServerProfiling bool
}

// NodePool is a set of identical kwok-simulated nodes.
type NodePool struct {
	// Prefix names the nodes <prefix>-0, <prefix>-1, ...; "worker" if empty.
	Prefix string
	Count  int
	// CPU, Memory, EphemeralStorage and Pods are the node capacity and
	// allocatable. Every real kubelet reports ephemeral-storage (its root
	// disk), so a simulated node does too.
	CPU              string
	Memory           string
	EphemeralStorage string
	Pods             int
	Labels           map[string]string
	Taints           []corev1.Taint
}

// DefaultNodePool is used when a ClusterSpec lists no nodes.
var DefaultNodePool = NodePool{Prefix: "worker", Count: 2, CPU: "8", Memory: "32Gi", EphemeralStorage: "100Gi", Pods: 110}

const (
	defaultPodCIDR     = "10.244.0.0/16"
	defaultServiceCIDR = "10.96.0.0/16"
)

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// withDefaults validates the spec and fills in defaults.
func (s ClusterSpec) withDefaults() (ClusterSpec, error) {
	if !dnsLabel.MatchString(s.Name) || len(s.Name) > 40 {
		return s, fmt.Errorf("cluster name %q is not valid: use lowercase letters, digits and '-', at most 40 characters", s.Name)
	}
	if s.PodCIDR == "" {
		s.PodCIDR = defaultPodCIDR
	}
	if s.ServiceCIDR == "" {
		s.ServiceCIDR = defaultServiceCIDR
	}
	if len(s.Nodes) == 0 {
		s.Nodes = []NodePool{DefaultNodePool}
	}
	seen := map[string]bool{}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if n.Prefix == "" {
			n.Prefix = "worker"
		}
		if seen[n.Prefix] {
			return s, fmt.Errorf("cluster %q: two node pools share the prefix %q", s.Name, n.Prefix)
		}
		seen[n.Prefix] = true
		if n.CPU == "" {
			n.CPU = DefaultNodePool.CPU
		}
		if n.Memory == "" {
			n.Memory = DefaultNodePool.Memory
		}
		if n.EphemeralStorage == "" {
			n.EphemeralStorage = DefaultNodePool.EphemeralStorage
		}
		if n.Pods == 0 {
			n.Pods = DefaultNodePool.Pods
		}
		if n.Count < 0 {
			return s, fmt.Errorf("cluster %q: node pool %q has a negative count", s.Name, n.Prefix)
		}
	}
	if s.RealNodes < 0 {
		return s, fmt.Errorf("cluster %q: the real node count is negative", s.Name)
	}
	if s.RealNodes > 100 {
		return s, fmt.Errorf("cluster %q: %d real nodes is more than this testbed runs (at most 100)", s.Name, s.RealNodes)
	}
	if s.MetricsServer && s.RealNodes == 0 {
		return s, fmt.Errorf("cluster %q: metrics-server runs on real nodes, and the cluster has none", s.Name)
	}
	switch s.ProxyMode {
	case "":
		s.ProxyMode = "nftables"
	case "nftables", "iptables":
	default:
		return s, fmt.Errorf("cluster %q: kube-proxy mode %q is not nftables or iptables", s.Name, s.ProxyMode)
	}
	if s.APIServerPort < 0 || s.APIServerPort > 65535 {
		return s, fmt.Errorf("cluster %q: API server port %d is out of range", s.Name, s.APIServerPort)
	}
	return s, nil
}

// nodeCIDRMaskSize gives every node a pod range large enough for its pods.
func (s ClusterSpec) nodeCIDRMaskSize() int {
	maxPods := 0
	for _, n := range s.Nodes {
		maxPods = max(maxPods, n.Pods)
	}
	size := 24
	for (1<<(32-size))-2 < maxPods && size > 16 {
		size--
	}
	return size
}

// Validate reports the first problem of the spec, if any.
func (s ClusterSpec) Validate() error {
	_, err := s.withDefaults()
	return err
}
