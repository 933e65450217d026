package virtualkubelet

import (
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// NodeConfig describes the virtual node that stands for one remote cluster.
// Zero durations take the defaults below.
type NodeConfig struct {
	// Name is the Node's name.
	Name string
	// RemoteClusterID is the provider's cluster ID, exposed as the
	// liqo.io/remote-cluster-id label.
	RemoteClusterID string
	// Labels are extra labels (typically the provider's cluster labels); the
	// runner's own labels (type, remote cluster ID, hostname, os, arch) take
	// precedence over them.
	Labels map[string]string
	// Taints are added to the virtual-node taint the runner always sets.
	Taints []corev1.Taint
	// Capacity is both the capacity and the allocatable of the Node.
	Capacity corev1.ResourceList
	// Address and Port are where the kubelet API serving the node listens
	// (kubeletapi.Server.Endpoint), published as the Node's InternalIP and
	// kubelet endpoint: the API server connects there for logs, exec and
	// port-forward. Empty and 0 publish none, and those requests fail.
	Address string
	Port    int32

	// HealthCheckInterval separates two probes of the remote API server.
	HealthCheckInterval time.Duration
	// HealthCheckTimeout bounds one probe; a slower answer counts as a failure.
	HealthCheckTimeout time.Duration
	// LeaseDuration is written into the Node's Lease, which is renewed every
	// quarter of it, like the kubelet does.
	LeaseDuration time.Duration
	// StatusUpdateInterval is how often the whole status is written again
	// even if nothing changed; Ready transitions are written immediately.
	StatusUpdateInterval time.Duration
	// UnreachableGrace is how long the node stays Ready while the remote
	// cluster is unreachable (taking no new pod): its pods are evicted only
	// after the grace and their not-ready toleration (300 s by default).
	// Unlike the durations above, zero means none: NotReady at once.
	UnreachableGrace time.Duration
}

// Defaults of NodeConfig's durations.
const (
	DefaultHealthCheckInterval  = 5 * time.Second
	DefaultHealthCheckTimeout   = 3 * time.Second
	DefaultLeaseDuration        = 40 * time.Second
	DefaultStatusUpdateInterval = time.Minute
)

// withDefaults validates cfg and fills in the zero durations.
func (cfg NodeConfig) withDefaults() (NodeConfig, error) {
	if cfg.Name == "" {
		return cfg, errors.New("virtual node: the node name is empty")
	}
	if cfg.RemoteClusterID == "" {
		return cfg, fmt.Errorf("virtual node %s: the remote cluster ID is empty", cfg.Name)
	}
	durations := []struct {
		name string
		d    *time.Duration
		def  time.Duration
	}{
		{"health check interval", &cfg.HealthCheckInterval, DefaultHealthCheckInterval},
		{"health check timeout", &cfg.HealthCheckTimeout, DefaultHealthCheckTimeout},
		{"lease duration", &cfg.LeaseDuration, DefaultLeaseDuration},
		{"status update interval", &cfg.StatusUpdateInterval, DefaultStatusUpdateInterval},
	}
	for _, d := range durations {
		if *d.d < 0 {
			return cfg, fmt.Errorf("virtual node %s: negative %s %s", cfg.Name, d.name, *d.d)
		}
		if *d.d == 0 {
			*d.d = d.def
		}
	}
	// Leases are written with second precision.
	if cfg.LeaseDuration < time.Second {
		return cfg, fmt.Errorf("virtual node %s: lease duration %s is shorter than a second", cfg.Name, cfg.LeaseDuration)
	}
	return cfg, nil
}

// leaseTiming gives the Lease's duration in whole seconds (rounded up) and
// its renew interval, a quarter of the duration as for the kubelet.
func (cfg NodeConfig) leaseTiming() (seconds int32, renew time.Duration) {
	seconds = int32((cfg.LeaseDuration + time.Second - 1) / time.Second)
	return seconds, cfg.LeaseDuration / 4
}
