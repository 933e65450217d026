package peering

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl"
	"github.com/liqo-go/liqo/test/harness"
)

// TestProxyURL: milan peers with naples through an HTTP CONNECT proxy given
// by --proxy-url. liqoctl itself connects directly (its kubeconfig names no
// proxy), so every tunnel the proxy relays is opened by milan's components,
// from the kubeconfig their Identity holds: the virtual node gets Ready
// through it. A URL client-go could not use is refused before anything
// changes, naming the flag, with the usage exit code.
func TestProxyURL(t *testing.T) {
	const consumer, provider = "milan", "naples"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	for _, bad := range []string{"ftp://127.0.0.1:21", "http://", "127.0.0.1:3128", "http://[::1"} {
		var stdout, stderr strings.Builder
		code := liqoctl.Run(ctx, []string{"peer", "--kubeconfig", kubeconfigs[consumer], "--remote-kubeconfig", kubeconfigs[provider],
			"--networking-disabled", "--proxy-url", bad}, &stdout, &stderr)
		if code != liqoctl.ExitUsage || !strings.Contains(stderr.String(), "--proxy-url") {
			t.Errorf("peer --proxy-url %s: exit %d, %q; want exit %d naming --proxy-url", bad, code, stderr.String(), liqoctl.ExitUsage)
		}
	}

	proxy := harness.StartConnectProxy(t)
	defer proxy.Stop()
	defer func() {
		if out, err := run(context.Background(), "unpeer", "--kubeconfig", kubeconfigs[consumer], "--remote-kubeconfig", kubeconfigs[provider]); err != nil {
			t.Errorf("unpeer: %v\n%s", err, out)
		}
	}()
	peer(t, consumer, provider, "--proxy-url", proxy.URL(), "--cpu", "1", "--memory", "1Gi", "--pods", "10")

	server := strings.TrimPrefix(tb.Cluster(provider).Config.Host, "https://")
	if proxy.Tunnels.Load() == 0 || !proxy.SawTarget(server) {
		t.Errorf("the proxy relayed %d tunnels, to %s too: %v; want some, to %s", proxy.Tunnels.Load(), server, proxy.SawTarget(server), server)
	}
	kubeconfig, err := run(ctx, "get", "kubeconfig", "--remote-cluster-id", provider, "--kubeconfig", kubeconfigs[consumer])
	if err != nil || !strings.Contains(kubeconfig, "proxy-url: "+proxy.URL()) {
		t.Errorf("the kubeconfig %s keeps for %s (%v) has no proxy-url %s:\n%s", consumer, provider, err, proxy.URL(), kubeconfig)
	}
	var id authv1beta1.Identity
	if err := clusterClient(t, consumer).Get(ctx, client.ObjectKey{Namespace: consts.TenantNamespace(provider), Name: consts.IdentityName(provider)}, &id); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(id.Status.Conditions, authv1beta1.ReadyCondition); c == nil || !strings.Contains(c.Message, "through proxy "+proxy.URL()) {
		t.Errorf("the Identity's Ready condition does not name the proxy: %+v", c)
	}
	t.Logf("%d tunnels through the proxy to %s", proxy.Tunnels.Load(), server)
}
