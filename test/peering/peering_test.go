package peering

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
)

func peer(t *testing.T, consumer, provider string, extra ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// The provider shares a part of its Ready nodes only: after a test
	// restarted its API server, its simulated nodes may still be NotReady
	// (their leases lapsed), and the peering would get nothing.
	waitNodesReady(ctx, t, provider)
	args := append([]string{"peer", "--kubeconfig", kubeconfigs[consumer], "--remote-kubeconfig", kubeconfigs[provider],
		"--networking-disabled"}, extra...)
	out, err := run(ctx, args...)
	if err != nil {
		t.Fatalf("liqoctl peer %s -> %s: %v\n%s", consumer, provider, err, out)
	}
	return out
}

// waitNodesReady waits until every simulated node of cluster is Ready with
// its Lease renewed in the last 20 s (kwok renews every 10 s) and, within
// two minutes of a restart of the cluster's API server (startAPIServer),
// steadily so for 6 s. After such an outage the nodes still show the Ready
// of before it until the node lifecycle controller, at its next pass
// (every 5 s), sees their leases stale and turns them Unknown; a peering
// decided in between gets nothing.
func waitNodesReady(ctx context.Context, t *testing.T, cluster string) {
	t.Helper()
	cs := tb.Cluster(cluster).Client()
	steady := time.Duration(0)
	if time.Since(apiServerStarted(cluster)) < 2*time.Minute {
		steady = 6 * time.Second
	}
	var steadySince time.Time
	harness.Eventually(ctx, t, "the Ready simulated nodes of "+cluster, func() (bool, error) {
		ready, err := nodesReadyAndRenewed(ctx, cs, 20*time.Second)
		if err != nil || !ready {
			steadySince = time.Time{}
			return false, err
		}
		if steadySince.IsZero() {
			steadySince = time.Now()
		}
		return time.Since(steadySince) >= steady, nil
	})
}

// apiServerRestarts is when each cluster's API server was last started
// again by a test.
var apiServerRestarts sync.Map

// startAPIServer starts cluster's API server again after a test stopped
// it, and remembers when (waitNodesReady).
func startAPIServer(t *testing.T, cluster string) {
	t.Helper()
	if err := tb.Cluster(cluster).StartComponent(testbed.APIServer); err != nil {
		t.Fatal(err)
	}
	apiServerRestarts.Store(cluster, time.Now())
}

func apiServerStarted(cluster string) time.Time {
	if v, ok := apiServerRestarts.Load(cluster); ok {
		return v.(time.Time)
	}
	return time.Time{}
}

// nodesReadyAndRenewed says whether every simulated node is Ready with its
// Lease renewed within fresh.
func nodesReadyAndRenewed(ctx context.Context, cs kubernetes.Interface, fresh time.Duration) (bool, error) {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: testbed.NodeTypeLabel + "=kwok"})
	if err != nil || len(nodes.Items) == 0 {
		return false, err
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		if !testbed.NodeReady(n) {
			return false, nil
		}
		l, err := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, n.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if l.Spec.RenewTime == nil || time.Since(l.Spec.RenewTime.Time) > fresh {
			return false, nil
		}
	}
	return true, nil
}

// waitNode waits for a Node of cluster to satisfy check.
func waitNode(t *testing.T, cluster, name string, what string, check func(*corev1.Node) bool) *corev1.Node {
	t.Helper()
	cs := tb.Cluster(cluster).Client()
	deadline := time.Now().Add(60 * time.Second)
	for {
		n, err := cs.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err == nil && check(n) {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s on %s: %s not reached (last error %v, node %+v)", name, cluster, what, err, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func checkVirtualNode(t *testing.T, consumer, provider string, cpu, mem, pods string) {
	t.Helper()
	n := waitNode(t, consumer, provider, "Ready", testbed.NodeReady)
	wantLabels := map[string]string{consts.TypeLabel: consts.TypeVirtualNode, consts.RemoteClusterIDLabel: provider}
	for _, c := range clusters {
		if c.name == provider {
			for k, v := range c.labels {
				wantLabels[k] = v
			}
		}
	}
	for k, v := range wantLabels {
		if n.Labels[k] != v {
			t.Errorf("node %s on %s: label %s=%q, want %q", provider, consumer, k, n.Labels[k], v)
		}
	}
	tainted := false
	for _, taint := range n.Spec.Taints {
		if taint.Key == consts.VirtualNodeTaintKey && taint.Value == "true" && taint.Effect == corev1.TaintEffectNoExecute {
			tainted = true
		}
	}
	if !tainted {
		t.Errorf("node %s on %s lacks the virtual-node taint: %v", provider, consumer, n.Spec.Taints)
	}
	for name, want := range map[corev1.ResourceName]string{corev1.ResourceCPU: cpu, corev1.ResourceMemory: mem, corev1.ResourcePods: pods} {
		w := resource.MustParse(want)
		if got := n.Status.Capacity[name]; got.Cmp(w) != 0 {
			t.Errorf("node %s on %s: capacity %s = %s, want %s", provider, consumer, name, got.String(), want)
		}
		if got := n.Status.Allocatable[name]; got.Cmp(w) != 0 {
			t.Errorf("node %s on %s: allocatable %s = %s, want %s", provider, consumer, name, got.String(), want)
		}
	}
}

// TestPeering is one story, in order: rome consumes from milan and naples,
// milan consumes from rome; the seed's common errors; the provider going away.
func TestPeering(t *testing.T) {
	t.Run("consumer peers with two providers", func(t *testing.T) {
		out := peer(t, "rome", "milan")
		for _, line := range []string{"Ensuring tenant namespace", "INFO: Tenant namespace correctly ensured",
			"Ensuring nonce secret", "INFO: Nonce secret ensured", "Waiting for nonce to be generated",
			"INFO: Nonce generated successfully", "INFO: ResourceSlice authentication: Accepted",
			"INFO: ResourceSlice resources: Accepted", "INFO: Virtual node milan is Ready"} {
			if !strings.Contains(out, line) {
				t.Errorf("peer output lacks %q:\n%s", line, out)
			}
		}
		peer(t, "rome", "naples", "--cpu=2", "--memory=4Gi", "--pods=20")
		checkVirtualNode(t, "rome", "milan", "4", "8Gi", "110")
		checkVirtualNode(t, "rome", "naples", "2", "4Gi", "20")
	})

	t.Run("peer is idempotent", func(t *testing.T) {
		out := peer(t, "rome", "milan")
		if !strings.Contains(out, "INFO: Virtual node milan is Ready") {
			t.Fatalf("second peer did not end Ready:\n%s", out)
		}
		nodes, err := tb.Cluster("rome").Client().CoreV1().Nodes().List(context.Background(),
			metav1.ListOptions{LabelSelector: consts.TypeLabel + "=" + consts.TypeVirtualNode})
		if err != nil || len(nodes.Items) != 2 {
			t.Fatalf("want exactly 2 virtual nodes on rome, got %d (%v)", len(nodes.Items), err)
		}
	})

	t.Run("provider peers back", func(t *testing.T) {
		peer(t, "milan", "rome")
		checkVirtualNode(t, "milan", "rome", "4", "8Gi", "110")
		checkVirtualNode(t, "rome", "milan", "4", "8Gi", "110")
	})

	t.Run("info shows the peerings healthy", func(t *testing.T) {
		out, err := run(context.Background(), "info", "--kubeconfig", kubeconfigs["rome"])
		if err != nil {
			t.Fatalf("info: %v\n%s", err, out)
		}
		for _, want := range []string{"milan", "naples", "ConsumerAndProvider", "Provider", "Healthy"} {
			if !strings.Contains(out, want) {
				t.Errorf("info output lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "Unhealthy") || strings.Contains(out, "Pending") {
			t.Errorf("info shows an unhealthy peering:\n%s", out)
		}
	})

	t.Run("wrong namespaces fail fast naming the namespace", func(t *testing.T) {
		for _, c := range []struct{ flag, ns, side string }{
			{"--remote-namespace", "liqo-system", "remote"},
			{"--namespace", "liqo-wrong", "local"},
		} {
			start := time.Now()
			out, err := run(context.Background(), "peer", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs["milan"], c.flag, c.ns)
			if err == nil {
				t.Fatalf("peer with %s %s succeeded:\n%s", c.flag, c.ns, out)
			}
			msg := err.Error()
			if !strings.Contains(msg, fmt.Sprintf("namespace %q", c.ns)) || !strings.Contains(msg, c.side) || !strings.Contains(msg, c.flag) {
				t.Errorf("error does not name namespace %q, the %s cluster and %s: %v", c.ns, c.side, c.flag, err)
			}
			t.Logf("%s %s failed after %s: %v", c.flag, c.ns, time.Since(start).Round(time.Millisecond), err)
		}
	})

	t.Run("unreachable remote kubeconfig", func(t *testing.T) {
		path := t.TempDir() + "/unreachable.kubeconfig"
		if err := writeUnreachableKubeconfig(path); err != nil {
			t.Fatal(err)
		}
		out, err := run(context.Background(), "peer", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", path, "--timeout", "20s")
		if err == nil || !strings.Contains(err.Error(), "remote cluster's API server at https://127.0.0.1:") || !strings.Contains(err.Error(), "unreachable") {
			t.Fatalf("want an unreachable error naming the server, got %v\n%s", err, out)
		}
		out, err = run(context.Background(), "peer", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", path+".missing")
		if err == nil || !strings.Contains(err.Error(), "cannot load the remote cluster's kubeconfig") {
			t.Fatalf("want a kubeconfig load error, got %v\n%s", err, out)
		}
	})

	t.Run("more cpu than the provider shares", func(t *testing.T) {
		// naples denies: the slice is denied with the reason, the old grant stands.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		out, err := run(ctx, "peer", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs["naples"], "--cpu=100", "--networking-disabled")
		if err == nil || !strings.Contains(err.Error(), "not enough resources: cpu: requested 100, 8 left") {
			t.Fatalf("want naples to deny 100 CPUs for lack of resources, got %v\n%s", err, out)
		}
		if !strings.Contains(out, "INFO: ResourceSlice resources: Denied") {
			t.Errorf("output lacks the denial:\n%s", out)
		}
		// Back to a request that fits.
		peer(t, "rome", "naples", "--cpu=2", "--memory=4Gi", "--pods=20")
		checkVirtualNode(t, "rome", "naples", "2", "4Gi", "20")

		// milan clamps: 50% of 16 CPUs is 8, less the 4 rome... rome's own
		// slice is the one being resized, so all 8 are available to it.
		out = peer(t, "rome", "milan", "--cpu=100")
		if !strings.Contains(out, "granted up to the sharing limit") {
			t.Errorf("output does not say the request was clamped:\n%s", out)
		}
		checkVirtualNode(t, "rome", "milan", "8", "8Gi", "110")
	})

	t.Run("unpeer keeps the reverse peering", func(t *testing.T) {
		out, err := run(context.Background(), "unpeer", "--kubeconfig", kubeconfigs["milan"], "--remote-kubeconfig", kubeconfigs["rome"])
		if err != nil {
			t.Fatalf("unpeer milan -> rome: %v\n%s", err, out)
		}
		if strings.Contains(out, "WARN") {
			t.Errorf("unpeer with both clusters up warned:\n%s", out)
		}
		ctx := context.Background()
		milan, rome := tb.Cluster("milan").Client(), tb.Cluster("rome").Client()
		if _, err := milan.CoreV1().Nodes().Get(ctx, "rome", metav1.GetOptions{}); err == nil {
			t.Errorf("virtual node rome still exists on milan")
		}
		// rome still consumes milan: both tenant namespaces stay, rome's node too.
		for _, c := range []struct {
			cs interface {
				CoreV1() corev1client.CoreV1Interface
			}
			ns string
		}{{milan, consts.TenantNamespace("rome")}, {rome, consts.TenantNamespace("milan")}} {
			if _, err := c.cs.CoreV1().Namespaces().Get(ctx, c.ns, metav1.GetOptions{}); err != nil {
				t.Errorf("namespace %s of the reverse peering: %v", c.ns, err)
			}
		}
		checkVirtualNode(t, "rome", "milan", "8", "8Gi", "110")
		raw, err := rome.CoreV1().RESTClient().Get().AbsPath("/apis/authentication.liqo.io/v1beta1/namespaces/" +
			consts.TenantNamespace("milan") + "/tenants/milan").DoRaw(ctx)
		if err == nil {
			t.Errorf("milan's Tenant on rome survived the unpeer: %s", raw)
		}
	})
}

// TestProviderOutage stops naples' API server: rome's virtual node for it
// reports its network unavailable at once (no new pod lands there) but
// stays Ready for the grace (testGrace here), then turns NotReady, and Ready
// again when naples is back; then unpeer with naples stopped cleans rome
// up within its timeout and says what is left on naples.
func TestProviderOutage(t *testing.T) {
	peer(t, "rome", "naples", "--cpu=2", "--memory=4Gi", "--pods=20")
	naples := tb.Cluster("naples")
	// An earlier outage may still show on the Node, and the peering above
	// may have restarted the virtual node's runner: wait for a steady
	// Ready (3 s in a row).
	var steadySince time.Time
	waitNode(t, "rome", "naples", "steadily Ready with its network available", func(n *corev1.Node) bool {
		if !testbed.NodeReady(n) || testbed.NodeCondition(n, corev1.NodeNetworkUnavailable) != corev1.ConditionFalse {
			steadySince = time.Time{}
			return false
		}
		if steadySince.IsZero() {
			steadySince = time.Now()
		}
		return time.Since(steadySince) > 3*time.Second
	})

	// The API server stops answering as its shutdown begins, which may
	// take seconds: times count from before the stop.
	stopping := time.Now()
	naples.StopComponent(testbed.APIServer)
	t.Logf("naples' API server stopped in %s", time.Since(stopping).Round(time.Millisecond))
	n := waitNode(t, "rome", "naples", "network unavailable", func(n *corev1.Node) bool {
		return testbed.NodeCondition(n, corev1.NodeNetworkUnavailable) == corev1.ConditionTrue
	})
	if took := time.Since(stopping); testbed.NodeReady(n) {
		t.Logf("virtual node Ready, its network unavailable, %s after the stop began: %s", took.Round(time.Millisecond), readyMessage(n))
	} else if took < testGrace {
		t.Errorf("virtual node NotReady %s after the stop began, within the grace: %s", took, readyMessage(n))
	}
	n = waitNode(t, "rome", "naples", "NotReady", func(n *corev1.Node) bool { return !testbed.NodeReady(n) })
	took := time.Since(stopping)
	t.Logf("virtual node NotReady %s after the stop began (grace %s, health check every 1s): %s",
		took.Round(time.Millisecond), testGrace, readyMessage(n))
	if took < testGrace {
		t.Errorf("NotReady after %s, within the grace of %s", took, testGrace)
	}

	startAPIServer(t, "naples")
	started := time.Now()
	waitNode(t, "rome", "naples", "Ready", testbed.NodeReady)
	t.Logf("virtual node Ready again %s after the API server restarted", time.Since(started).Round(time.Millisecond))

	naples.StopComponent(testbed.APIServer)
	defer func() {
		startAPIServer(t, "naples")
		waitManager("naples")
	}()
	start := time.Now()
	out, err := run(context.Background(), "unpeer", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs["naples"], "--timeout", "30s", "--delete-namespaces")
	took = time.Since(start)
	if err != nil {
		t.Fatalf("unpeer with the provider down: %v\n%s", err, out)
	}
	t.Logf("unpeer with the provider down took %s:\n%s", took.Round(time.Millisecond), out)
	if took > 30*time.Second {
		t.Errorf("unpeer took %s, beyond its 30s timeout", took)
	}
	if !strings.Contains(out, "not removed on the remote cluster") || !strings.Contains(out, consts.TenantNamespace("rome")) {
		t.Errorf("unpeer does not say what it left on the provider:\n%s", out)
	}
	rome := tb.Cluster("rome").Client()
	if _, err := rome.CoreV1().Nodes().Get(context.Background(), "naples", metav1.GetOptions{}); err == nil {
		t.Errorf("virtual node naples still exists on rome after unpeer")
	}
	if ns, err := rome.CoreV1().Namespaces().Get(context.Background(), consts.TenantNamespace("naples"), metav1.GetOptions{}); err == nil {
		t.Errorf("tenant namespace %s still exists on rome (phase %s)", ns.Name, ns.Status.Phase)
	}
}

func readyMessage(n *corev1.Node) string {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Reason + ": " + c.Message
		}
	}
	return ""
}

func writeUnreachableKubeconfig(path string) error {
	cfg := `apiVersion: v1
kind: Config
clusters:
- name: gone
  cluster:
    server: https://127.0.0.1:1
    insecure-skip-tls-verify: true
contexts:
- name: gone
  context: {cluster: gone, user: gone}
current-context: gone
users:
- name: gone
  user: {token: nothing}
`
	return writeFile(path, cfg)
}
