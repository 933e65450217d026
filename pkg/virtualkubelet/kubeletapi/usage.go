package kubeletapi

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// UsageReader reads what the provider measured of the pods bound to a
// virtual node. The Server calls it on every scrape of the node's
// /stats/summary or /metrics/resource, from many goroutines at once.
type UsageReader interface {
	// Usage returns one entry per local pod whose twin the provider
	// measured. An error wrapping ErrNoMetrics says the provider measures
	// nothing for this cluster (no metrics API, or no right to read it).
	Usage(ctx context.Context, node string) (*UsageReport, error)
}

// UsageReport is the usage of a node's pods, and the measures refused.
type UsageReport struct {
	Pods []PodUsage
	// Rejected says, per local pod, why the provider's measure of its
	// twin was refused (podUsage).
	Rejected []string
}

// ErrNoMetrics is wrapped by the errors of a UsageReader whose provider
// serves no metrics to this cluster.
var ErrNoMetrics = errors.New("the provider serves no pod metrics to this cluster")

var _ UsageReader = (*PodResolver)(nil)

// Usage implements UsageReader: the local pods bound to node, their twin
// namespaces from the provider's NamespaceMap, and the provider's
// metrics.k8s.io PodMetrics of each twin namespace, read with the
// consumer's credentials (the provider grants them there and nowhere
// else). The twin pod has the local pod's name.
func (r *PodResolver) Usage(ctx context.Context, node string) (*UsageReport, error) {
	var n corev1.Node
	if err := r.Reader.Get(ctx, types.NamespacedName{Name: node}, &n); err != nil {
		return nil, fmt.Errorf("reading node %s: %w", node, err)
	}
	provider := n.Labels[consts.RemoteClusterIDLabel]
	if n.Labels[consts.TypeLabel] != consts.TypeVirtualNode || provider == "" {
		return nil, fmt.Errorf("node %s is not a virtual node", node)
	}
	var pods corev1.PodList
	// The API reader: the manager's cache holds only its own pods.
	if err := r.Reader.List(ctx, &pods, client.MatchingFields{"spec.nodeName": node}); err != nil {
		return nil, fmt.Errorf("listing the pods of node %s: %w", node, err)
	}
	byNamespace := map[string][]*corev1.Pod{}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Status.Phase == corev1.PodRunning {
			byNamespace[p.Namespace] = append(byNamespace[p.Namespace], p)
		}
	}
	report := &UsageReport{}
	if len(byNamespace) == 0 {
		return report, nil
	}
	var nm offv1beta1.NamespaceMap
	if err := r.Reader.Get(ctx, consts.NamespaceMapKey(provider), &nm); err != nil {
		return nil, fmt.Errorf("reading the namespace map of cluster %s: %w", provider, err)
	}
	conn, err := r.Remotes.Get(ctx, provider)
	if err != nil {
		return nil, fmt.Errorf("credentials for cluster %s: %w", provider, err)
	}
	now := time.Now()
	for ns, local := range byNamespace {
		twin := nm.Status.CurrentMapping[ns].RemoteNamespace
		if twin == "" {
			continue
		}
		list, err := conn.Metrics.MetricsV1beta1().PodMetricses(twin).List(ctx, metav1.ListOptions{})
		if err != nil {
			if apierrors.IsNotFound(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsForbidden(err) {
				return nil, fmt.Errorf("%w: reading pods.metrics.k8s.io in %s on cluster %s: %w", ErrNoMetrics, twin, provider, err)
			}
			return nil, fmt.Errorf("reading pods.metrics.k8s.io in %s on cluster %s: %w", twin, provider, err)
		}
		measured := make(map[string]int, len(list.Items))
		for i := range list.Items {
			measured[list.Items[i].Name] = i
		}
		for _, p := range local {
			i, ok := measured[p.Name]
			if !ok {
				continue
			}
			u, err := podUsage(p, &list.Items[i], now)
			if err != nil {
				report.Rejected = append(report.Rejected, fmt.Sprintf("pod %s/%s: %v", p.Namespace, p.Name, err))
				continue
			}
			report.Pods = append(report.Pods, u)
		}
	}
	sort.Strings(report.Rejected)
	return report, nil
}

// Limits of what a consumer accepts in a provider's measure.
const (
	// maxClockSkew is how far in the future a measure may be stamped.
	maxClockSkew = time.Minute
	// maxWindow is the longest window a measure may average over
	// (metrics-server's is its resolution, 15 s by default).
	maxWindow = 10 * time.Minute
)

// podUsage checks the provider's measure m of the twin of the local pod
// and turns it into the pod's usage. The provider is not trusted: its
// measure is refused unless it is stamped in the past (or within
// maxClockSkew) over a positive window of at most maxWindow, and names
// only containers of the local pod, each once; a negative quantity is
// refused too. A measure stamped in the far future would freeze the
// pod's counter, and a foreign container name would add series to the
// node's metrics.
func podUsage(local *corev1.Pod, m *metricsv1beta1.PodMetrics, now time.Time) (PodUsage, error) {
	u := PodUsage{Namespace: local.Namespace, Name: local.Name, UID: local.UID, Timestamp: m.Timestamp.Time, Window: m.Window.Duration}
	switch {
	case u.Timestamp.IsZero():
		return u, errors.New("the measure has no timestamp")
	case u.Timestamp.After(now.Add(maxClockSkew)):
		return u, fmt.Errorf("the measure is stamped %s, in the future", u.Timestamp.UTC().Format(time.RFC3339))
	case u.Window <= 0 || u.Window > maxWindow:
		return u, fmt.Errorf("the measure's window %s is not between 0 and %s", u.Window, maxWindow)
	}
	containers := make(map[string]bool, len(local.Spec.Containers))
	for _, c := range local.Spec.Containers {
		containers[c.Name] = true
	}
	seen := make(map[string]bool, len(m.Containers))
	for _, c := range m.Containers {
		if !containers[c.Name] || seen[c.Name] {
			return u, fmt.Errorf("the measure names container %q, which the pod has not or names twice", c.Name)
		}
		seen[c.Name] = true
		cpu, mem := c.Usage[corev1.ResourceCPU], c.Usage[corev1.ResourceMemory]
		if cpu.Sign() < 0 || mem.Sign() < 0 {
			return u, fmt.Errorf("the measure of container %q is negative", c.Name)
		}
		u.Containers = append(u.Containers, ContainerUsage{Name: c.Name, NanoCores: uint64(cpu.ScaledValue(-9)), MemoryBytes: uint64(mem.Value())})
	}
	return u, nil
}
