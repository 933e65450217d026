package install

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/nftables"
	"github.com/google/nftables/binaryutil"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/peer"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
	"github.com/liqo-go/liqo/test/realpods"
)

// TestInBandPeering runs the manual's in-band commands verbatim, with both
// kubeconfigs merged in $KUBECONFIG, while every real node of each cluster
// drops what goes to the other cluster's API server: only the gateways'
// UDP port joins the clusters. peer in-band --bidirectional gives each
// consumer the other's API server at its address in the fabric, a pod
// offloaded each way runs and its log is read through the tunnel, and
// unpeer in-band removes both peerings and the tunnel.
func TestInBandPeering(t *testing.T) {
	ctx := realpods.Timeout(t, 20*time.Minute)
	for _, c := range []*testbed.Cluster{rome, milan} {
		if out, err := install(ctx, c); err != nil {
			t.Fatalf("install on %s: %v\n%s", c.Name, err, out)
		}
	}
	t.Cleanup(func() { cleanup(t, "inband-") })
	for _, c := range []*testbed.Cluster{rome, milan} {
		peerOf := milan
		if c == milan {
			peerOf = rome
		}
		blockAPIServer(t, c, peerOf)
	}
	t.Setenv("KUBECONFIG", kubeconfigs["rome"]+string(os.PathListSeparator)+kubeconfigs["milan"])

	out, err := run(ctx, "peer", "in-band", "--context=rome", "--remote-context=milan", "--bidirectional",
		"--server-service-type", "NodePort", "--timeout", "6m")
	if err != nil {
		t.Fatalf("peer in-band: %v\n%s", err, out)
	}
	t.Logf("peer in-band:\n%s", out)

	// Each consumer reaches the other's API server in the fabric, checked
	// as kubernetes.default.svc.
	for _, x := range []struct{ consumer, provider *testbed.Cluster }{{rome, milan}, {milan, rome}} {
		out, err := realpods.Kubectl(ctx, x.consumer, "get", "identities", "-n", consts.TenantNamespace(x.provider.Name), consts.IdentityName(x.provider.Name),
			"-o", "jsonpath={.spec.authParams.apiServer} {.spec.authParams.tlsServerName}")
		if err != nil {
			t.Fatalf("%s's Identity for %s: %v\n%s", x.consumer.Name, x.provider.Name, err, out)
		}
		server, tlsName, _ := strings.Cut(out, " ")
		u, err := url.Parse(server)
		if err != nil || tlsName != peer.InBandTLSServerName || u.Hostname() == x.provider.UnderlayAddress().String() {
			t.Errorf("%s's Identity for %s: server %q, TLS name %q; want an address in the fabric, checked as %s",
				x.consumer.Name, x.provider.Name, server, tlsName, peer.InBandTLSServerName)
		}
	}

	// The ForeignClusters' networking module follows the tunnel, and
	// liqoctl info shows its round trip.
	harness.Eventually(ctx, t, "rome's ForeignCluster milan with a healthy networking module", func() (bool, error) {
		out, err := realpods.Kubectl(ctx, rome, "get", "foreignclusters", "milan", "-o", "jsonpath={.status.modules.networking.summary}")
		return out == "Healthy", err
	})
	harness.Eventually(ctx, t, "liqoctl info to show the tunnel's latency", func() (bool, error) {
		out, err := run(ctx, "info", "--context", "rome", "--get", "peerings.0.networking.latency")
		return err == nil && strings.HasSuffix(strings.TrimSpace(out), "s"), nil
	})

	// A pod offloaded each way runs, and its log comes through the tunnel.
	for _, x := range []struct{ consumer, provider *testbed.Cluster }{{rome, milan}, {milan, rome}} {
		ns := realpods.Namespace(ctx, t, x.consumer, "inband")
		if out, err := run(ctx, "offload", "namespace", ns, "--context", x.consumer.Name, "--pod-offloading-strategy", "Remote", "--timeout", "2m"); err != nil {
			t.Fatalf("offload %s on %s: %v\n%s", ns, x.consumer.Name, err, out)
		}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "talker", Namespace: ns, Labels: map[string]string{"app": "talker"}},
			Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](1),
				Containers: []corev1.Container{{Name: "talk", Image: "busybox",
					Command: []string{"sh", "-c", "echo hello from " + x.provider.Name + "; exec sleep 3600"}}}},
		}
		if _, err := x.consumer.Client().CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		realpods.RunningPods(ctx, t, x.consumer, ns, "app=talker", 1)
		harness.Eventually(ctx, t, "the log of the pod offloaded to "+x.provider.Name, func() (bool, error) {
			out, err := realpods.Kubectl(ctx, x.consumer, "logs", "-n", ns, "talker")
			return strings.Contains(out, "hello from "+x.provider.Name), err
		})
		if out, err := run(ctx, "unoffload", "namespace", ns, "--context", x.consumer.Name, "--timeout", "2m"); err != nil {
			t.Fatalf("unoffload %s on %s: %v\n%s", ns, x.consumer.Name, err, out)
		}
	}

	out, err = run(ctx, "unpeer", "in-band", "--context=rome", "--remote-context=milan", "--timeout", "4m", "--delete-namespaces")
	if err != nil {
		t.Fatalf("unpeer in-band: %v\n%s", err, out)
	}
	for _, c := range []*testbed.Cluster{rome, milan} {
		nodes, err := c.Client().CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: consts.TypeLabel + "=" + consts.TypeVirtualNode})
		if err != nil || len(nodes.Items) != 0 {
			t.Errorf("%s after unpeer in-band: virtual nodes %v (%v)", c.Name, nodes, err)
		}
		for _, kind := range []string{"gatewayserver.networking.liqo.io", "gatewayclient.networking.liqo.io", "configuration.networking.liqo.io", "publickey.networking.liqo.io"} {
			// kubectl says "No resources found" on stderr, which Kubectl keeps.
			if out, err := realpods.Kubectl(ctx, c, "get", kind, "-A", "--no-headers"); err != nil || !strings.Contains(out, "No resources found") {
				t.Errorf("%s after unpeer in-band: %s left: %v\n%s", c.Name, kind, err, out)
			}
		}
	}
}

// blockAPIServer makes every real node of c drop TCP to peer's API server
// on the underlay (forwarded from pods and sent by the node itself), until
// the test ends: c's components can reach peer only through the fabric.
func blockAPIServer(t *testing.T, c, peer *testbed.Cluster) {
	t.Helper()
	u, err := url.Parse(peer.UnderlayServer())
	if err != nil {
		t.Fatal(err)
	}
	host, portStr, _ := net.SplitHostPort(u.Host)
	addr, err := netip.ParseAddr(host)
	port, perr := strconv.Atoi(portStr)
	if err != nil || perr != nil {
		t.Fatalf("%s's underlay server %q", peer.Name, peer.UnderlayServer())
	}
	table := &nftables.Table{Family: nftables.TableFamilyIPv4, Name: "liqo-test-inband"}
	for _, node := range c.RealNodeNames() {
		err := c.InNode(node, func() error {
			conn, err := nftables.New()
			if err != nil {
				return err
			}
			conn.AddTable(table)
			for _, hook := range []*nftables.ChainHook{nftables.ChainHookForward, nftables.ChainHookOutput} {
				ch := conn.AddChain(&nftables.Chain{Name: "drop-" + strconv.Itoa(int(*hook)), Table: table, Type: nftables.ChainTypeFilter,
					Hooknum: hook, Priority: nftables.ChainPriorityFilter})
				conn.AddRule(&nftables.Rule{Table: table, Chain: ch, Exprs: []expr.Any{
					&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: 16, Len: 4},
					&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: addr.AsSlice()},
					&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
					&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.IPPROTO_TCP}},
					&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2},
					&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binaryutil.BigEndian.PutUint16(uint16(port))},
					&expr.Counter{},
					&expr.Verdict{Kind: expr.VerdictDrop},
				}})
			}
			return conn.Flush()
		})
		if err != nil {
			t.Fatalf("blocking %s's API server on %s/%s: %v", peer.Name, c.Name, node, err)
		}
		t.Cleanup(func() {
			_ = c.InNode(node, func() error {
				conn, err := nftables.New()
				if err != nil {
					return err
				}
				conn.DelTable(table)
				return conn.Flush()
			})
		})
	}
	// The block holds: the node cannot open a connection to it.
	dctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if conn, err := c.DialInNode(dctx, c.RealNodeNames()[0], "tcp", u.Host); err == nil {
		_ = conn.Close()
		t.Fatalf("%s's node still reaches %s's API server at %s", c.Name, peer.Name, u.Host)
	}
}
