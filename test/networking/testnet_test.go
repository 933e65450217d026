package networking

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
	"github.com/liqo-go/liqo/test/realpods"
)

// scaleGateway sets the replicas of rome's gateway to milan.
func scaleGateway(ctx context.Context, t *testing.T, replicas int32) {
	t.Helper()
	deps := rome.Client().AppsV1().Deployments(consts.TenantNamespace("milan"))
	s, err := deps.GetScale(ctx, "gw-milan", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Spec.Replicas = replicas
	if _, err := deps.UpdateScale(ctx, "gw-milan", s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestNetworkCheck peers rome with milan by plain liqoctl peer, as on a
// cluster without a load balancer: the gateway server's LoadBalancer
// Service gets no address and is replaced by a NodePort, saying so. Then
// it runs liqoctl test network on the peered clusters: it
// passes; with rome's gateway scaled to zero it fails naming the cells
// that cross the tunnel; scaled back, it passes again. Then the server
// gateway's pod is deleted and the time until traffic flows again is
// printed.
func TestNetworkCheck(t *testing.T) {
	ctx := realpods.Timeout(t, 12*time.Minute)
	// Earlier tests may leave a gateway server exposed by a NodePort, which
	// peer keeps when run again: start from no fabric, as a first peering.
	if out, err := liqoctlRun(ctx, "network", "reset", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs["milan"]); err != nil {
		t.Fatalf("network reset: %v\n%s", err, out)
	}
	out, err := liqoctlRun(ctx, "peer", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs["milan"])
	if err != nil {
		t.Fatalf("peer: %v\n%s", err, out)
	}
	if !strings.Contains(out, "exposing it as a NodePort instead") {
		t.Errorf("peer did not say it fell back to a NodePort:\n%s", out)
	}
	args := []string{"test", "network", "--kubeconfig", kubeconfigs["rome"], "--timeout", "4m"}
	out, err = liqoctlRun(ctx, args...)
	if err != nil {
		t.Fatalf("test network on a working fabric: %v\n%s", err, out)
	}
	// Rome's pod to milan's by address and Service, rome's node to milan's
	// pod by address (behind the gateway), milan's pod to rome's by Service.
	if !strings.Contains(out, "All 4 checks passed") || !strings.Contains(out, "FROM") {
		t.Errorf("the output does not report 4 passed checks in a table:\n%s", out)
	}
	t.Logf("liqoctl test network:\n%s", out)
	if out, err := liqoctlRun(ctx, append(args, "--basic")...); err != nil || !strings.Contains(out, "All 1 checks passed") {
		t.Errorf("test network --basic: %v; want the one check by pod address\n%s", err, out)
	}

	scaleGateway(ctx, t, 0)
	harness.Eventually(ctx, t, "rome's gateway pod gone", func() (bool, error) {
		pods, err := rome.Client().CoreV1().Pods(consts.TenantNamespace("milan")).List(ctx, metav1.ListOptions{})
		return err == nil && len(pods.Items) == 0, err
	})
	out, err = liqoctlRun(ctx, append(args, "--attempts", "2")...)
	if err == nil {
		t.Fatalf("test network passed with the gateway scaled to zero:\n%s", out)
	}
	for _, cell := range []string{"local (local) → remote-milan (milan) (pod IP)", "remote-milan (milan) → local (local) (Service)",
		"local-node (node real-0) → remote-milan (milan) (pod IP)"} {
		if !strings.Contains(err.Error(), cell) {
			t.Errorf("the failure does not name %q: %v", cell, err)
		}
	}
	t.Logf("with the gateway scaled to zero: %v", err)
	scaleGateway(ctx, t, 1)
	if out, err := liqoctlRun(ctx, args...); err != nil {
		t.Fatalf("test network after scaling the gateway back: %v\n%s", err, out)
	}

	// Delete milan's gateway pod (the server) and time the recovery of
	// traffic from rome's pod to the offloaded one.
	ns := realpods.Namespace(ctx, t, rome, "recovery")
	if out, err := liqoctlRun(ctx, "offload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"], "--timeout", "2m"); err != nil {
		t.Fatalf("offload: %v\n%s", err, out)
	}
	cs := rome.Client()
	for _, p := range []string{"web-local", "web-remote"} {
		sel, tolerate := realpods.OnRealNodes, false
		if p == "web-remote" {
			sel, tolerate = map[string]string{consts.TypeLabel: consts.TypeVirtualNode}, true
		}
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, webPod(ns, p, sel, tolerate), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var remoteIP string
	for _, p := range realpods.RunningPods(ctx, t, rome, ns, "app=web", 2) {
		if p.Name == "web-remote" {
			remoteIP = p.Status.PodIP
		}
	}
	url := "http://" + remoteIP + ":8080/"
	if got := realpods.Fetch(ctx, t, rome, ns, "web-local", url); got != "web-remote" {
		t.Fatalf("before the deletion %s answered %q", url, got)
	}
	gwNS := consts.TenantNamespace("rome")
	pods, err := milan.Client().CoreV1().Pods(gwNS).List(ctx, metav1.ListOptions{})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("milan's gateway pods: %v %v", pods, err)
	}
	start := time.Now()
	if err := milan.Client().CoreV1().Pods(gwNS).Delete(ctx, pods.Items[0].Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(ctx, t, "the old gateway pod gone", func() (bool, error) {
		_, err := milan.Client().CoreV1().Pods(gwNS).Get(ctx, pods.Items[0].Name, metav1.GetOptions{})
		return err != nil, nil
	})
	if got := realpods.Fetch(ctx, t, rome, ns, "web-local", url); got != "web-remote" {
		t.Fatalf("after the deletion %s answered %q", url, got)
	}
	t.Logf("traffic resumed %s after milan's gateway pod was deleted", time.Since(start).Round(100*time.Millisecond))
}

// TestReversePeering peers milan with rome as well (milan consumes rome's
// resources): the peering reuses the tunnel rome set up, one fabric for
// both directions, and liqoctl test network passes from milan's side.
func TestReversePeering(t *testing.T) {
	ctx := realpods.Timeout(t, 10*time.Minute)
	for _, pair := range [][2]string{{"rome", "milan"}, {"milan", "rome"}} {
		out, err := liqoctlRun(ctx, "peer", "--kubeconfig", kubeconfigs[pair[0]], "--remote-kubeconfig", kubeconfigs[pair[1]],
			"--server-service-type", "NodePort", "--timeout", "5m")
		if err != nil {
			t.Fatalf("peer %s -> %s: %v\n%s", pair[0], pair[1], err, out)
		}
		if pair[0] == "milan" && !strings.Contains(out, "reusing that tunnel") {
			t.Errorf("the reverse peering did not reuse the tunnel:\n%s", out)
		}
	}
	// One gateway on each side for the pair, whichever direction made it.
	for _, x := range []struct {
		c    *testbed.Cluster
		peer string
	}{{rome, "milan"}, {milan, "rome"}} {
		out, err := realpods.Kubectl(ctx, x.c, "get", "gatewayservers,gatewayclients", "-n", consts.TenantNamespace(x.peer), "--no-headers")
		if err != nil {
			t.Fatal(err)
		}
		if n := len(strings.Split(strings.TrimSpace(out), "\n")); n != 1 {
			t.Errorf("%s has %d gateways for %s, want 1:\n%s", x.c.Name, n, x.peer, out)
		}
	}
	if out, err := liqoctlRun(ctx, "test", "network", "--kubeconfig", kubeconfigs["milan"], "--timeout", "4m"); err != nil {
		t.Fatalf("test network from milan: %v\n%s", err, out)
	}

	// Unpeering one way keeps the tunnel the other way uses; unpeering
	// both removes the fabric: no gateway pod, and nothing of ours on
	// the nodes.
	for _, pair := range [][2]string{{"milan", "rome"}, {"rome", "milan"}} {
		if out, err := liqoctlRun(ctx, "unpeer", "--kubeconfig", kubeconfigs[pair[0]], "--remote-kubeconfig", kubeconfigs[pair[1]], "--delete-namespaces"); err != nil {
			t.Fatalf("unpeer %s -> %s: %v\n%s", pair[0], pair[1], err, out)
		}
	}
	for _, x := range []struct {
		c    *testbed.Cluster
		peer string
	}{{rome, "milan"}, {milan, "rome"}} {
		harness.Eventually(ctx, t, x.c.Name+"'s gateway pods for "+x.peer+" gone", func() (bool, error) {
			pods, err := x.c.Client().CoreV1().Pods(consts.TenantNamespace(x.peer)).List(ctx, metav1.ListOptions{})
			return err == nil && len(pods.Items) == 0, err
		})
	}
	nothingLeftOnNodes(ctx, t, rome, milan)
}
