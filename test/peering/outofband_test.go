package peering

import (
	"context"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"

	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/peering"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
)

// TestPeerOutOfBandByTheManager: liqoctl, given rome's kubeconfig only,
// peers rome with milan out of band, with an --auth-url whose host
// ("kubernetes", a name milan's serving certificate holds) this machine
// cannot resolve: only through --proxy-url, which rome's controller
// manager uses and which maps the name to milan's API server, is milan
// reachable. So the handshake is the manager's: the proxy relays it, and
// the ForeignCluster reports each step and the outcome.
func TestPeerOutOfBandByTheManager(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if addrs, err := net.DefaultResolver.LookupHost(ctx, "kubernetes"); err == nil {
		t.Skipf("this machine resolves kubernetes (%v): the test needs a name only the proxy knows", addrs)
	}
	// An earlier test's peering leaves milan's tenant namespace for rome
	// (unpeer keeps it), which a generic peering user may not claim.
	cleanPeeringUsers(t, "rome")
	t.Cleanup(func() { cleanPeeringUsers(t, "rome") })
	out, err := run(ctx, "generate", "peer-command", "--only-command", "--kubeconfig", kubeconfigs["milan"])
	if err != nil {
		t.Fatalf("liqoctl generate peer-command: %v\n%s", err, out)
	}
	line := harness.PeerCommand(t, out)
	milanURL, err := url.Parse(harness.FlagOf(t, line, "--auth-url"))
	if err != nil {
		t.Fatal(err)
	}
	hidden := "kubernetes:" + milanURL.Port()
	proxy := harness.StartConnectProxy(t)
	proxy.Alias = map[string]string{"kubernetes": milanURL.Hostname()}
	defer proxy.Stop()

	waitNodesReady(ctx, t, "milan")
	out, err = run(ctx, "peer", "out-of-band", "milan", "--auth-url", "https://"+hidden, "--cluster-id", "milan",
		"--auth-token", harness.FlagOf(t, line, "--auth-token"), "--proxy-url", proxy.URL(),
		"--kubeconfig", kubeconfigs["rome"], "--networking-disabled", "--cpu", "1", "--memory", "1Gi", "--pods", "10")
	if err != nil {
		t.Fatalf("peer out-of-band through the manager: %v\n%s", err, out)
	}
	for _, want := range []string{
		"Request recorded in Secret " + consts.TenantNamespace("milan") + "/" + peering.OutOfBandRequestSecret,
		"Controller manager: authenticating with the provider",
		"Virtual node milan is Ready",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	if !proxy.SawTarget(hidden) {
		t.Errorf("the proxy relayed no tunnel to %s: the handshake was not the manager's", hidden)
	}
	waitNode(t, "rome", "milan", "Ready", testbed.NodeReady)
	rome := clusterClient(t, "rome")
	var fc corev1beta1.ForeignCluster
	if err := rome.Get(ctx, types.NamespacedName{Name: "milan"}, &fc); err != nil {
		t.Fatal(err)
	}
	if c := oobCondition(&fc); c == nil || c.Status != corev1beta1.EstablishedStatus {
		t.Errorf("the ForeignCluster's %s condition: %+v, want Established", peering.OutOfBandCondition, c)
	}
	if fc.Status.Role != corev1beta1.ProviderRole {
		t.Errorf("milan's role: %s, want %s", fc.Status.Role, corev1beta1.ProviderRole)
	}
	// Each step is an Event on the ForeignCluster (liqoctl may not see a
	// step as quick as the first in the condition).
	harness.Eventually(ctx, t, "the manager's Events on the ForeignCluster", func() (bool, error) {
		var events corev1.EventList
		if err := rome.List(ctx, &events); err != nil {
			return false, err
		}
		seen := map[string]bool{}
		for _, e := range events.Items {
			if e.InvolvedObject.Kind == "ForeignCluster" && e.InvolvedObject.Name == "milan" {
				seen[e.Reason] = true
			}
		}
		return seen[peering.ReasonVerifyingServer] && seen[peering.ReasonClaiming] && seen[peering.ReasonAuthenticating] && seen[peering.ReasonPeered], nil
	})

	// The kept kubeconfig names the provider as the manager reached it:
	// unpeer out-of-band goes through the proxy too.
	var kept corev1.Secret
	if err := rome.Get(ctx, types.NamespacedName{Namespace: consts.TenantNamespace("milan"), Name: peering.OutOfBandKubeconfigSecret}, &kept); err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.Load(kept.Data[consts.KubeconfigKey])
	if err != nil {
		t.Fatal(err)
	}
	if c := kc.Clusters[kc.Contexts[kc.CurrentContext].Cluster]; c.Server != "https://"+hidden || c.ProxyURL != proxy.URL() {
		t.Errorf("the kept kubeconfig reaches %s through %q, want %s through %s", c.Server, c.ProxyURL, "https://"+hidden, proxy.URL())
	}
	out, err = run(ctx, "unpeer", "out-of-band", "milan", "--kubeconfig", kubeconfigs["rome"], "--delete-namespaces")
	if err != nil {
		t.Fatalf("liqoctl unpeer out-of-band milan: %v\n%s", err, out)
	}
	waitGoneNode(ctx, t, "rome", "milan")
	if strings.Contains(out, "not removed on the remote cluster") {
		t.Errorf("unpeer out-of-band left objects on milan:\n%s", out)
	}
}
