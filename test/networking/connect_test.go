package networking

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	gwctrl "github.com/liqo-go/liqo/pkg/controllermanager/gateway"
	"github.com/liqo-go/liqo/pkg/datapath"
	"github.com/liqo-go/liqo/pkg/fabric"
	"github.com/liqo-go/liqo/pkg/ipam"
	"github.com/liqo-go/liqo/pkg/liqoctl"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
	"github.com/liqo-go/liqo/test/realpods"
)

func liqoctlRun(ctx context.Context, args ...string) (string, error) {
	return liqoctl.Execute(ctx, args...)
}

// remapped is the address under which cluster c reaches ip, a pod IP of
// its peer: the peer's pod CIDR as c's IPAM remapped it, same host bits.
func remapped(ctx context.Context, t *testing.T, c *testbed.Cluster, peer string, ip string) string {
	t.Helper()
	cl, err := client.New(c.Config, client.Options{Scheme: apis.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	var cfg netv1beta1.Configuration
	if err := cl.Get(ctx, types.NamespacedName{Namespace: consts.TenantNamespace(peer), Name: peer}, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Status.Remote == nil || len(cfg.Status.Remote.CIDR.Pod) == 0 {
		t.Fatalf("%s: Configuration of %s not remapped: %+v", c.Name, peer, cfg.Status)
	}
	to := netip.MustParsePrefix(string(cfg.Status.Remote.CIDR.Pod[0]))
	if to.Overlaps(podCIDR) {
		t.Errorf("%s reaches %s's pods at %s, which overlaps its own pod CIDR %s", c.Name, peer, to, podCIDR)
	}
	got, err := ipam.RemapIP(netip.MustParseAddr(ip), podCIDR, to)
	if err != nil {
		t.Fatal(err)
	}
	return got.String()
}

// TestPodToPod connects rome (gateway client) and milan (gateway server),
// whose pods take their addresses from the same 10.244.0.0/16: a pod of
// each reaches a web server pod of the other at its remapped address.
// After network reset, no link, route rule or nftables table of ours is left on
// the nodes.
func TestPodToPod(t *testing.T) {
	ctx := realpods.Timeout(t, 10*time.Minute)
	args := []string{"--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs["milan"]}
	start := time.Now()
	out, err := liqoctlRun(ctx, append([]string{"network", "connect", "--server-service-type", "NodePort", "--timeout", "5m"}, args...)...)
	if err != nil {
		t.Fatalf("network connect: %v\n%s", err, out)
	}
	t.Logf("network connect took %s:\n%s", time.Since(start).Round(time.Millisecond), out)

	type side struct {
		c      *testbed.Cluster
		peer   string
		ns     string
		web    string // the web pod's name
		webIP  string
		client string
	}
	sides := []*side{{c: rome, peer: "milan"}, {c: milan, peer: "rome"}}
	for _, s := range sides {
		s.ns = realpods.Namespace(ctx, t, s.c, "fabric")
		realpods.DeployWeb(ctx, t, s.c, s.ns, 1, 0)
		s.client = realpods.Client(ctx, t, s.c, s.ns, "")
	}
	for _, s := range sides {
		p := realpods.RunningPods(ctx, t, s.c, s.ns, "app=web", 1)[0]
		s.web, s.webIP = p.Name, p.Status.PodIP
	}
	for i, s := range sides {
		other := sides[1-i]
		url := "http://" + remapped(ctx, t, s.c, s.peer, other.webIP) + ":8080/"
		start := time.Now()
		got := realpods.Fetch(ctx, t, s.c, s.ns, s.client, url)
		t.Logf("%s's pod fetched %s (%s's pod at %s) in %s", s.c.Name, url, other.c.Name, other.webIP, time.Since(start).Round(time.Millisecond))
		if got != other.web {
			t.Errorf("%s's pod fetched %s (%s's pod %s at %s) and got %q", s.c.Name, url, other.c.Name, other.web, other.webIP, got)
		}
	}

	out, err = liqoctlRun(ctx, append([]string{"network", "reset"}, args...)...)
	if err != nil {
		t.Fatalf("network reset: %v\n%s", err, out)
	}
	nothingLeftOnNodes(ctx, t, rome, milan)
}

// nothingLeftOnNodes waits until no gateway pod is left in clusters, and
// no link, rule, route or nftables table of the fabric's on their real
// nodes.
func nothingLeftOnNodes(ctx context.Context, t *testing.T, clusters ...*testbed.Cluster) {
	t.Helper()
	for _, c := range clusters {
		harness.Eventually(ctx, t, "no gateway pod left in "+c.Name, func() (bool, error) {
			pods, err := c.Client().CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: gwctrl.ComponentLabel + "=" + gwctrl.ComponentValue})
			return err == nil && len(pods.Items) == 0, err
		})
		for _, node := range c.RealNodeNames() {
			harness.Eventually(ctx, t, "nothing of ours left on "+c.Name+"/"+node, func() (bool, error) {
				var left []string
				err := c.InNode(node, func() error {
					exists, err := datapath.TableExists(fabric.NATTable)
					if exists {
						left = append(left, "nftables table "+fabric.NATTable)
					}
					links, lerr := netlink.LinkList()
					for _, l := range links {
						if strings.HasPrefix(l.Attrs().Name, "liqo") {
							left = append(left, "link "+l.Attrs().Name)
						}
					}
					rules, rerr := netlink.RuleList(netlink.FAMILY_V4)
					for _, r := range rules {
						if r.Table == fabric.RouteTable {
							left = append(left, "rule to table 18402")
						}
					}
					routes, ferr := netlink.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Table: fabric.RouteTable}, netlink.RT_FILTER_TABLE)
					for _, r := range routes {
						left = append(left, "route "+r.String())
					}
					return errors.Join(err, lerr, rerr, ferr)
				})
				if err != nil {
					return false, err
				}
				if len(left) > 0 {
					t.Logf("%s/%s still has %v", c.Name, node, left)
				}
				return len(left) == 0, nil
			})
		}
	}
}
