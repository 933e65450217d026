package fabric

import (
	"net/netip"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/gateway"
)

func cfg(remapped ...netv1beta1.CIDR) *netv1beta1.Configuration {
	return &netv1beta1.Configuration{ObjectMeta: metav1.ObjectMeta{Name: "c"},
		Status: netv1beta1.ConfigurationStatus{Remote: &netv1beta1.ClusterConfig{CIDR: netv1beta1.ClusterConfigCIDR{Pod: remapped}}}}
}

func internal(ip string) *netv1beta1.InternalGatewayEndpoint {
	return &netv1beta1.InternalGatewayEndpoint{IP: ptr.To(netv1beta1.IP(ip)), Node: ptr.To("n1")}
}

func TestGatewayFrom(t *testing.T) {
	g, err := GatewayFrom("t/milan", "u1", internal("10.244.1.7"), cfg("10.71.0.0/16"))
	if err != nil || g.PodIP != netip.MustParseAddr("10.244.1.7") || len(g.Remotes) != 1 {
		t.Fatalf("gateway %+v, %v", g, err)
	}
	for name, c := range map[string]struct {
		ie  *netv1beta1.InternalGatewayEndpoint
		cfg *netv1beta1.Configuration
	}{
		"no pod yet": {nil, nil},
		"IPv6 pod":   {internal("fd00::1"), nil},
		"host bits":  {internal("10.244.1.7"), cfg("10.71.3.4/16")},
		"default":    {internal("10.244.1.7"), cfg("0.0.0.0/0")},
		"not a CIDR": {internal("10.244.1.7"), cfg("10.71.0.0/16 dev eth0")},
	} {
		if g, err := GatewayFrom("t/x", "u", c.ie, c.cfg); err == nil {
			t.Errorf("%s: accepted as %+v", name, g)
		}
	}
}

func TestDesired(t *testing.T) {
	a := Gateway{Key: "t1/milan", UID: "u1", PodIP: netip.MustParseAddr("10.244.1.7"),
		Remotes: []netip.Prefix{netip.MustParsePrefix("10.71.0.0/16"), netip.MustParsePrefix("10.73.0.0/16")}}
	b := Gateway{Key: "t0/turin", UID: "u2", PodIP: netip.MustParseAddr("10.244.2.9"),
		Remotes: []netip.Prefix{netip.MustParsePrefix("10.72.0.0/16"), netip.MustParsePrefix("10.73.0.0/16")}}
	links, err := Desired("n1", []Gateway{a, b})
	if err == nil || !strings.Contains(err.Error(), "10.73.0.0/16") {
		t.Fatalf("a CIDR claimed twice not reported: %v", err)
	}
	if len(links) != 2 || links[0].Gateway != "t0/turin" || links[1].Gateway != "t1/milan" {
		t.Fatalf("links %+v", links)
	}
	if r := links[1].Routes; len(r) != 1 || r[0] != netip.MustParsePrefix("10.71.0.0/16") {
		t.Fatalf("milan routes %v: the contested CIDR must go to neither", r)
	}
	if links[1].VNI != gateway.OverlayVNI("u1", "n1") || links[1].Remote != a.PodIP {
		t.Fatalf("milan link %+v", links[1])
	}
}
