package networking

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/liqo-go/liqo/test/realpods"
)

// TestTwoProviders: rome consumes milan and paris, three clusters with
// the same pod CIDR. Rome's IPAM gives each provider's pods a distinct
// remapped CIDR, and liqoctl test network passes with a server on each
// virtual node: rome's pod reaches both providers' pods, by address and
// Service, and each provider's pod reaches rome's.
func TestTwoProviders(t *testing.T) {
	ctx := realpods.Timeout(t, 12*time.Minute)
	t.Cleanup(func() {
		// The other tests know rome as milan's consumer only.
		if out, err := liqoctlRun(context.Background(), "unpeer", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs["paris"], "--delete-namespaces"); err != nil {
			t.Errorf("unpeer rome -> paris: %v\n%s", err, out)
		}
	})
	for _, provider := range []string{"milan", "paris"} {
		if out, err := liqoctlRun(ctx, "peer", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs[provider],
			"--server-service-type", "NodePort", "--timeout", "5m"); err != nil {
			t.Fatalf("peer rome -> %s: %v\n%s", provider, err, out)
		}
	}
	milanPods := netip.MustParseAddr(remapped(ctx, t, rome, "milan", "10.244.0.1"))
	parisPods := netip.MustParseAddr(remapped(ctx, t, rome, "paris", "10.244.0.1"))
	if milanPods == parisPods {
		t.Fatalf("rome reaches milan's and paris's pods in the same remapped CIDR (%s)", milanPods)
	}
	out, err := liqoctlRun(ctx, "test", "network", "--kubeconfig", kubeconfigs["rome"], "--timeout", "5m")
	if err != nil {
		t.Fatalf("test network with two providers: %v\n%s", err, out)
	}
	if !strings.Contains(out, "All 8 checks passed") {
		t.Errorf("want 8 checks (rome's pod to each provider by address and Service, rome's node to each by address, each provider to rome):\n%s", out)
	}
	t.Logf("%s", out)
}
