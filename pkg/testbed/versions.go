package testbed

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
)

// pauseSource is the testbed's pause program, built like the upstream
// binaries; its cache folder is named after a hash of the source, so an edit
// rebuilds it.
//
//go:embed pause/main.go
var pauseSource []byte

var pauseVersion = func() string {
	sum := sha256.Sum256(pauseSource)
	return hex.EncodeToString(sum[:6])
}()

// Versions pins the upstream releases the testbed builds. Changing a version
// changes the cache key, so binaries are rebuilt only when a pin moves.
type Versions struct {
	// Kubernetes is the k8s.io/kubernetes release (vMAJOR.MINOR.PATCH) of the
	// control plane and kubectl.
	Kubernetes string
	// Etcd is the go.etcd.io/etcd/server/v3 release.
	Etcd string
	// Kwok is the sigs.k8s.io/kwok release that simulates nodes.
	Kwok string
	// CoreDNS is the github.com/coredns/coredns release serving cluster DNS
	// on real nodes.
	CoreDNS string
	// MetricsServer is the sigs.k8s.io/metrics-server release serving the
	// metrics.k8s.io API (ClusterSpec.MetricsServer).
	MetricsServer string
}

// DefaultVersions are the releases the project is tested against.
var DefaultVersions = Versions{
	Kubernetes:    "v1.34.4",
	Etcd:          "v3.6.16",
	Kwok:          "v0.8.0",
	CoreDNS:       "v1.14.7",
	MetricsServer: "v0.8.0",
}

// stagingVersion maps a Kubernetes release to the version of its staging
// modules (k8s.io/api, k8s.io/client-go, ...): v1.34.4 -> v0.34.4.
func stagingVersion(k8s string) (string, error) {
	var major, minor, patch int
	if _, err := fmt.Sscanf(k8s, "v%d.%d.%d", &major, &minor, &patch); err != nil || major != 1 {
		return "", fmt.Errorf("kubernetes version %q is not of the form v1.MINOR.PATCH", k8s)
	}
	return fmt.Sprintf("v0.%d.%d", minor, patch), nil
}
