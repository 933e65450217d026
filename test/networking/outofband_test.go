package networking

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
	"github.com/liqo-go/liqo/test/realpods"
)

// TestPeerOutOfBandNetworkByTheManager: the command paris's administrator
// hands over, run with rome's kubeconfig only, peers rome with paris with
// the network fabric, all of it done by rome's controller manager: the
// auth URL names a host ("kubernetes", which paris's certificate holds)
// that only the proxy rome's manager uses resolves, so liqoctl could not
// have reached paris. Both gateways report the tunnel Connected and a pod
// of rome reaches a pod of paris at its remapped address.
func TestPeerOutOfBandNetworkByTheManager(t *testing.T) {
	ctx := realpods.Timeout(t, 10*time.Minute)
	out, err := liqoctlRun(ctx, "generate", "peer-command", "--consumer-cluster-id", "rome", "--only-command", "--kubeconfig", kubeconfigs["paris"])
	if err != nil {
		t.Fatalf("generate peer-command: %v\n%s", err, out)
	}
	line := harness.PeerCommand(t, out)
	parisURL, err := url.Parse(harness.FlagOf(t, line, "--auth-url"))
	if err != nil {
		t.Fatal(err)
	}
	hidden := "kubernetes:" + parisURL.Port()
	proxy := harness.StartConnectProxy(t)
	proxy.Alias = map[string]string{"kubernetes": parisURL.Hostname()}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		// Before the proxy goes: the kept kubeconfig reaches paris through it.
		if out, err := liqoctlRun(ctx, "unpeer", "out-of-band", "paris", "--kubeconfig", kubeconfigs["rome"]); err != nil {
			t.Errorf("unpeer out-of-band: %v\n%s", err, out)
		}
		if out, err := liqoctlRun(ctx, "delete", "peering-user", "--consumer-cluster-id", "rome", "--kubeconfig", kubeconfigs["paris"]); err != nil {
			t.Errorf("delete peering-user: %v\n%s", err, out)
		}
		proxy.Stop()
	})

	out, err = liqoctlRun(ctx, "peer", "out-of-band", "paris", "--auth-url", "https://"+hidden, "--cluster-id", "paris",
		"--auth-token", harness.FlagOf(t, line, "--auth-token"), "--proxy-url", proxy.URL(), "--kubeconfig", kubeconfigs["rome"],
		"--server-service-type", "NodePort", "--cpu", "1", "--memory", "1Gi", "--pods", "10", "--timeout", "6m")
	if err != nil {
		t.Fatalf("peer out-of-band: %v\n%s", err, out)
	}
	if !strings.Contains(out, "Controller manager: setting up the network fabric") {
		t.Errorf("the manager did not report the network step:\n%s", out)
	}
	if !proxy.SawTarget(hidden) {
		t.Errorf("the proxy relayed no tunnel to %s: the handshake was not the manager's", hidden)
	}
	for _, side := range []struct {
		c        *testbed.Cluster
		ns, name string
	}{{rome, consts.TenantNamespace("paris"), "paris"}, {paris, consts.TenantNamespace("rome"), "rome"}} {
		cl, err := client.New(side.c.Config, client.Options{Scheme: apis.NewScheme()})
		if err != nil {
			t.Fatal(err)
		}
		harness.Eventually(ctx, t, side.c.Name+"'s tunnel to its peer Connected", func() (bool, error) {
			var conn netv1beta1.Connection
			if err := cl.Get(ctx, types.NamespacedName{Namespace: side.ns, Name: side.name}, &conn); err != nil {
				return false, err
			}
			return conn.Status.Value == netv1beta1.Connected, nil
		})
	}

	ns := realpods.Namespace(ctx, t, paris, "oob")
	realpods.DeployWeb(ctx, t, paris, ns, 1, 0)
	web := realpods.RunningPods(ctx, t, paris, ns, "app=web", 1)[0]
	clientNS := realpods.Namespace(ctx, t, rome, "oob")
	pod := realpods.Client(ctx, t, rome, clientNS, "")
	target := "http://" + remapped(ctx, t, rome, "paris", web.Status.PodIP) + ":8080/"
	if got := realpods.Fetch(ctx, t, rome, clientNS, pod, target); got != web.Name {
		t.Errorf("rome's pod fetched %s (paris's pod %s) and got %q", target, web.Name, got)
	}
}
