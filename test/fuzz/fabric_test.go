package fuzz

import (
	"net/netip"
	"strings"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"

	ipamv1alpha1 "github.com/liqo-go/liqo/apis/ipam/v1alpha1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/controllermanager/shadowendpointslice"
	"github.com/liqo-go/liqo/pkg/fabric"
	"github.com/liqo-go/liqo/pkg/gateway"
	"github.com/liqo-go/liqo/pkg/ipam"
)

func cidrs(s string) []netv1beta1.CIDR {
	var out []netv1beta1.CIDR
	for c := range strings.SplitSeq(s, ",") {
		if c != "" {
			out = append(out, netv1beta1.CIDR(c))
		}
	}
	return out
}

// canonical is what every prefix reaching the kernel must be.
func canonical(p netip.Prefix) bool {
	return p.IsValid() && p.Addr().Is4() && p.Masked() == p && p.Bits() > 0
}

// FuzzFabricConfiguration: whatever CIDRs a peer announces in a
// Configuration (and whatever the status beside them says), the gateway
// and the node agent take only canonical IPv4 prefixes, pairs of the same
// size, and never a /0.
func FuzzFabricConfiguration(f *testing.F) {
	f.Add("10.244.0.0/16", "10.71.0.0/16", "10.70.0.0/16", "10.72.0.0/16")
	f.Add("10.244.0.0/16,10.245.0.0/16", "10.71.0.0/16", "0.0.0.0/0", "0.0.0.0/0")
	f.Add("10.244.1.5/16", "10.71.0.0/24", "fd00::/64", "10.72.0.0/16")
	f.Add("", "", "garbage", "10.0.0.0/8")
	f.Fuzz(func(t *testing.T, pod, podRemapped, ext, extRemapped string) {
		cfg := &netv1beta1.Configuration{}
		cfg.Name = "milan"
		cfg.Spec.Remote.CIDR = netv1beta1.ClusterConfigCIDR{Pod: cidrs(pod), External: cidrs(ext)}
		cfg.Status.Remote = &netv1beta1.ClusterConfig{CIDR: netv1beta1.ClusterConfigCIDR{Pod: cidrs(podRemapped), External: cidrs(extRemapped)}}
		s, _ := gateway.Desired("uid", nil, cfg, nil)
		for _, p := range append(s.Pod, s.External...) {
			if !canonical(p.Real) || !canonical(p.Remapped) || p.Real.Bits() != p.Remapped.Bits() {
				t.Fatalf("the gateway took the pair %v", p)
			}
		}
		ip := netv1beta1.IP("10.244.0.3")
		g, _ := fabric.GatewayFrom("ns/gw", "uid", &netv1beta1.InternalGatewayEndpoint{IP: &ip}, cfg)
		for _, p := range g.Remotes {
			if !canonical(p) {
				t.Fatalf("the node agent took %v", p)
			}
		}
	})
}

// FuzzLocalIPs: whatever an IP's addresses say, the gateway takes only
// IPv4 pairs, each twin once.
func FuzzLocalIPs(f *testing.F) {
	f.Add("10.96.0.1", "10.70.0.1", "172.31.0.1", "10.70.0.1")
	f.Add("fd00::1", "10.70.0.2", "", "10.70.0.3")
	f.Fuzz(func(t *testing.T, real1, twin1, real2, twin2 string) {
		ips := []ipamv1alpha1.IP{
			{Spec: ipamv1alpha1.IPSpec{IP: netv1beta1.IP(real1)}, Status: ipamv1alpha1.IPStatus{IP: netv1beta1.IP(twin1)}},
			{Spec: ipamv1alpha1.IPSpec{IP: netv1beta1.IP(real2)}, Status: ipamv1alpha1.IPStatus{IP: netv1beta1.IP(twin2)}},
		}
		ips[0].Name, ips[1].Name = "a", "b"
		out, _ := gateway.LocalIPs(ips)
		seen := map[netip.Addr]bool{}
		for _, l := range out {
			if !l.Real.Is4() || !l.Twin.Is4() || seen[l.Twin] {
				t.Fatalf("the gateway took %v (of %v)", l, out)
			}
			seen[l.Twin] = true
		}
	})
}

// FuzzEndpointSliceAddresses: whatever addresses a consumer's
// ShadowEndpointSlice holds, the provider's EndpointSlice holds only
// addresses in the consumer's remapped CIDRs, and every address is either
// kept (translated) or reported dropped; without a Configuration of the
// consumer, none is kept.
func FuzzEndpointSliceAddresses(f *testing.F) {
	f.Add("10.244.1.5,10.70.0.1,172.31.1.10,10.96.0.1,not-an-ip,::1")
	f.Add("10.244.255.255,10.245.0.1,0.0.0.0")
	m, err := ipam.NewMapping([]string{"10.244.0.0/16", "10.70.0.0/16"}, []string{"10.71.0.0/16", "10.72.0.0/16"})
	if err != nil {
		f.Fatal(err)
	}
	allowed := []netip.Prefix{netip.MustParsePrefix("10.71.0.0/16"), netip.MustParsePrefix("10.72.0.0/16")}
	f.Fuzz(func(t *testing.T, addrs string) {
		list := strings.Split(addrs, ",")
		ses := &offv1beta1.ShadowEndpointSlice{}
		ses.Name, ses.Namespace = "s", "ns-rome"
		ses.Spec.Template.AddressType = discoveryv1.AddressTypeIPv4
		ses.Spec.Template.Endpoints = []discoveryv1.Endpoint{{Addresses: list}}
		out, dropped := shadowendpointslice.ForgeEndpointSlice(ses, m.Translate)
		kept := 0
		for _, e := range out.Endpoints {
			for _, a := range e.Addresses {
				kept++
				ip, err := netip.ParseAddr(a)
				if err != nil || !allowed[0].Contains(ip) && !allowed[1].Contains(ip) {
					t.Fatalf("address %q reached the provider's EndpointSlice", a)
				}
			}
		}
		if kept+len(dropped) != len(list) {
			t.Fatalf("%d kept and %d dropped of %d", kept, len(dropped), len(list))
		}
		// Without the consumer's Configuration nothing is known to be its.
		if out, dropped := shadowendpointslice.ForgeEndpointSlice(ses, nil); len(out.Endpoints) != 0 || len(dropped) != len(list) {
			t.Fatalf("without a translation: %d endpoints kept, %d of %d addresses dropped", len(out.Endpoints), len(dropped), len(list))
		}
	})
}
