package gateway

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/fabric"
	"github.com/liqo-go/liqo/pkg/gateway"
	"github.com/liqo-go/liqo/test/harness"
)

// recorder is the node agent's kernel side as seen from outside: the last
// links it was told to apply (the kernel side itself is proven with real
// packets in test/fabric).
type recorder struct {
	mu    sync.Mutex
	links []fabric.Link
	calls int
}

func (r *recorder) Apply(links []fabric.Link) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.links, r.calls = links, r.calls+1
	return nil
}

func (r *recorder) last() ([]fabric.Link, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.links, r.calls
}

// TestNodeAgentFollowsGateways runs the node agent's loop against the
// cluster where the gateway controllers run: once a GatewayServer's pod
// has an address and its peer's Configuration has remapped CIDRs, the node
// gets one overlay link to that pod routing exactly those CIDRs; a CIDR
// the checks refuse is not routed; the gateway's deletion removes the
// link.
func TestNodeAgentFollowsGateways(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	rec := &recorder{}
	agentCtx, stopAgent := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fabric.Run(agentCtx, restCfg, "node-a", rec) }()
	t.Cleanup(func() {
		stopAgent()
		if err := <-done; err != nil {
			t.Errorf("the node agent: %v", err)
		}
	})

	ns := tenant(t, ctx, "oslo")
	conf := &netv1beta1.Configuration{ObjectMeta: metav1.ObjectMeta{Name: "oslo", Namespace: ns,
		Labels: map[string]string{consts.RemoteClusterIDLabel: "oslo"}},
		Spec: netv1beta1.ConfigurationSpec{Remote: netv1beta1.ClusterConfig{CIDR: netv1beta1.ClusterConfigCIDR{
			Pod: []netv1beta1.CIDR{"10.244.0.0/16"}, External: []netv1beta1.CIDR{"10.70.0.0/16"}}}}}
	if err := cl.Create(ctx, conf); err != nil {
		t.Fatal(err)
	}
	// What the IPAM writes (its own tests cover how).
	conf.Status.Remote = &netv1beta1.ClusterConfig{CIDR: netv1beta1.ClusterConfigCIDR{
		Pod: []netv1beta1.CIDR{"10.71.0.0/16"}, External: []netv1beta1.CIDR{"10.72.0.0/16"}}}
	if err := cl.Status().Update(ctx, conf); err != nil {
		t.Fatal(err)
	}
	gws := &netv1beta1.GatewayServer{ObjectMeta: metav1.ObjectMeta{Name: "oslo", Namespace: ns,
		Labels: map[string]string{consts.RemoteClusterIDLabel: "oslo"}},
		Spec: netv1beta1.GatewayServerSpec{Endpoint: netv1beta1.Endpoint{Port: 51840, ServiceType: corev1.ServiceTypeNodePort}}}
	if err := cl.Create(ctx, gws); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(ctx, t, "the gateway's pod address", func() (bool, error) {
		err := cl.Get(ctx, client.ObjectKeyFromObject(gws), gws)
		return err == nil && gws.Status.InternalEndpoint != nil && gws.Status.InternalEndpoint.IP != nil, err
	})
	podIP := netip.MustParseAddr(string(*gws.Status.InternalEndpoint.IP))
	want := fmt.Sprint([]fabric.Link{{Gateway: ns + "/oslo", VNI: gateway.OverlayVNI(string(gws.UID), "node-a"), Remote: podIP,
		Routes: []netip.Prefix{netip.MustParsePrefix("10.71.0.0/16"), netip.MustParsePrefix("10.72.0.0/16")}}})
	harness.Eventually(ctx, t, "the link to the gateway", func() (bool, error) {
		links, _ := rec.last()
		return fmt.Sprint(links) == want, nil
	})

	// A remapped CIDR of the whole space is not routed (it would take
	// the node's default route); the rest still is.
	conf.Status.Remote.CIDR.External = []netv1beta1.CIDR{"0.0.0.0/0"}
	if err := cl.Status().Update(ctx, conf); err != nil {
		t.Fatal(err)
	}
	want = fmt.Sprint([]fabric.Link{{Gateway: ns + "/oslo", VNI: gateway.OverlayVNI(string(gws.UID), "node-a"), Remote: podIP,
		Routes: []netip.Prefix{netip.MustParsePrefix("10.71.0.0/16")}}})
	harness.Eventually(ctx, t, "the refused CIDR left out", func() (bool, error) {
		links, _ := rec.last()
		return fmt.Sprint(links) == want, nil
	})

	if err := cl.Delete(ctx, gws); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(ctx, t, "no link once the gateway is gone", func() (bool, error) {
		links, calls := rec.last()
		return calls > 0 && len(links) == 0, nil
	})
}
