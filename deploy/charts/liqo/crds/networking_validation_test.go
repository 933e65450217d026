package crds_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1alpha1 "github.com/liqo-go/liqo/apis/ipam/v1alpha1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
)

// TestFabricValidation sends the API server, with no webhook, bad and hostile
// fabric objects, and expects each refused by the CRDs' own rules with a
// message that says what is wrong.
func TestFabricValidation(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns := "fabric-validation"
	c := fabricClient(ctx, t, ns)
	meta := metav1.ObjectMeta{Name: "milan", Namespace: ns}

	conf := func(pod, external []netv1beta1.CIDR) *netv1beta1.Configuration {
		return &netv1beta1.Configuration{ObjectMeta: meta, Spec: netv1beta1.ConfigurationSpec{
			Remote: netv1beta1.ClusterConfig{CIDR: netv1beta1.ClusterConfigCIDR{Pod: pod, External: external}},
		}}
	}
	ext := []netv1beta1.CIDR{"10.70.0.0/16"}
	many := make([]netv1beta1.CIDR, 33)
	for i := range many {
		many[i] = netv1beta1.CIDR(fmt.Sprintf("10.%d.0.0/16", i))
	}
	server := func(e netv1beta1.Endpoint, mtu int32) *netv1beta1.GatewayServer {
		return &netv1beta1.GatewayServer{ObjectMeta: meta, Spec: netv1beta1.GatewayServerSpec{MTU: mtu, Endpoint: e}}
	}
	clientTo := func(port int32, addresses ...netv1beta1.Address) *netv1beta1.GatewayClient {
		return &netv1beta1.GatewayClient{ObjectMeta: meta, Spec: netv1beta1.GatewayClientSpec{
			Endpoint: netv1beta1.EndpointStatus{Addresses: addresses, Port: port},
		}}
	}
	key := func(n int) *netv1beta1.PublicKey {
		return &netv1beta1.PublicKey{ObjectMeta: meta, Spec: netv1beta1.PublicKeySpec{PublicKey: publicKey(n)}}
	}
	ip := func(addr netv1beta1.IP) *ipamv1alpha1.IP {
		return &ipamv1alpha1.IP{ObjectMeta: meta, Spec: ipamv1alpha1.IPSpec{IP: addr}}
	}
	network := func(cidr netv1beta1.CIDR) *ipamv1alpha1.Network {
		return &ipamv1alpha1.Network{ObjectMeta: meta, Spec: ipamv1alpha1.NetworkSpec{CIDR: cidr}}
	}

	creations := []struct {
		name string
		obj  client.Object
		want []string
	}{
		{"CIDR prefix too long", conf([]netv1beta1.CIDR{"10.0.0.0/33"}, ext), []string{"spec.remote.cidr.pod[0]", `"10.0.0.0/33" is not a network in CIDR notation`}},
		{"CIDR that is a word", conf([]netv1beta1.CIDR{"pods"}, ext), []string{`"pods" is not a network in CIDR notation`}},
		{"CIDR with host bits", conf([]netv1beta1.CIDR{"10.244.0.1/16"}, ext), []string{`"10.244.0.1/16" is not a network in CIDR notation with zero host bits`}},
		{"CIDR with a shell command", conf([]netv1beta1.CIDR{"10.0.0.0/8;reboot"}, ext), []string{"is not a network in CIDR notation"}},
		{"CIDR not in its canonical form", conf([]netv1beta1.CIDR{"fd00:0::/16"}, ext), []string{`"fd00:0::/16" is not a network in CIDR notation with zero host bits, in its canonical form`}},
		{"CIDR of 10 KB", conf([]netv1beta1.CIDR{netv1beta1.CIDR(strings.Repeat("1", 10000))}, ext), []string{"spec.remote.cidr.pod[0]", "Too long"}},
		{"external CIDR bad", conf([]netv1beta1.CIDR{"10.244.0.0/16"}, []netv1beta1.CIDR{"10.70.0.0/99"}), []string{"spec.remote.cidr.external[0]", "is not a network"}},
		{"local CIDR bad", &netv1beta1.Configuration{ObjectMeta: meta, Spec: netv1beta1.ConfigurationSpec{
			Local:  &netv1beta1.ClusterConfig{CIDR: netv1beta1.ClusterConfigCIDR{Pod: []netv1beta1.CIDR{"10.244.0.0"}}},
			Remote: netv1beta1.ClusterConfig{CIDR: netv1beta1.ClusterConfigCIDR{Pod: []netv1beta1.CIDR{"10.244.0.0/16"}, External: ext}},
		}}, []string{"spec.local.cidr.pod[0]", "is not a network"}},
		{"no remote pod CIDR", conf(nil, ext), []string{"remote.cidr.pod needs at least one CIDR"}},
		{"no remote external CIDR", conf([]netv1beta1.CIDR{"10.244.0.0/16"}, nil), []string{"remote.cidr.external needs at least one CIDR"}},
		{"repeated pod CIDR", conf([]netv1beta1.CIDR{"10.244.0.0/16", "10.244.0.0/16"}, ext), []string{"pod CIDRs must not repeat"}},
		{"33 pod CIDRs", conf(many, ext), []string{"spec.remote.cidr.pod", "Too many"}},

		{"public key of 31 bytes", key(31), []string{"spec.publicKey", "should match"}},
		{"public key of 33 bytes", key(33), []string{"spec.publicKey", "should match"}},
		// An empty string is no base64 to the API server's format check, which
		// refuses it before the length rule runs.
		{"empty public key", key(0), []string{"spec.publicKey", "must be of type byte"}},
		{"no public key", &netv1beta1.PublicKey{ObjectMeta: meta}, []string{"spec.publicKey", "Required value"}},
		{"public key of 1 MB", key(1 << 20), []string{"spec.publicKey", "Too long"}},

		{"server port above 65535", server(netv1beta1.Endpoint{Port: 70000}, 0), []string{"spec.endpoint.port", "less than or equal to 65535"}},
		{"server port negative", server(netv1beta1.Endpoint{Port: -1}, 0), []string{"spec.endpoint.port", "greater than or equal to 1"}},
		{"node port above 65535", server(netv1beta1.Endpoint{ServiceType: corev1.ServiceTypeNodePort, NodePort: ptr.To[int32](65536)}, 0), []string{"spec.endpoint.nodePort", "less than or equal to 65535"}},
		{"MTU too small", server(netv1beta1.Endpoint{}, 100), []string{"spec.mtu", "greater than or equal to 576"}},
		{"MTU too large", server(netv1beta1.Endpoint{}, 65536), []string{"spec.mtu", "less than or equal to 9000"}},
		{"ExternalName gateway", server(netv1beta1.Endpoint{ServiceType: corev1.ServiceTypeExternalName}, 0), []string{"spec.endpoint.serviceType", "Unsupported value"}},
		{"node port on a ClusterIP", server(netv1beta1.Endpoint{NodePort: ptr.To[int32](30000)}, 0), []string{"nodePort needs serviceType NodePort or LoadBalancer"}},
		{"load balancer IP on a NodePort", server(netv1beta1.Endpoint{ServiceType: corev1.ServiceTypeNodePort, LoadBalancerIP: ptr.To("1.2.3.4")}, 0), []string{"loadBalancerIP needs serviceType LoadBalancer"}},
		{"load balancer IP not an IP", server(netv1beta1.Endpoint{ServiceType: corev1.ServiceTypeLoadBalancer, LoadBalancerIP: ptr.To("lb.example")}, 0), []string{`"lb.example" is not an IP address`}},

		{"client without address", clientTo(51840), []string{"endpoint.addresses needs the address of the peer's gateway server"}},
		{"client without port", clientTo(0, "172.18.0.3"), []string{"endpoint.port needs the port of the peer's gateway server"}},
		{"client port above 65535", clientTo(65536, "172.18.0.3"), []string{"spec.endpoint.port", "less than or equal to 65535"}},
		{"client address with a shell command", clientTo(51840, "$(reboot)"), []string{`"$(reboot)" is neither an IP address nor a DNS name`}},
		{"client MTU too small", &netv1beta1.GatewayClient{ObjectMeta: meta, Spec: netv1beta1.GatewayClientSpec{
			MTU: 1, Endpoint: netv1beta1.EndpointStatus{Addresses: []netv1beta1.Address{"172.18.0.3"}, Port: 51840},
		}}, []string{"spec.mtu", "greater than or equal to 576"}},

		{"connection of no known type", &netv1beta1.Connection{ObjectMeta: meta, Spec: netv1beta1.ConnectionSpec{Type: "Both"}}, []string{"spec.type", "Unsupported value"}},

		{"network CIDR bad", network("10.70.0.0/16/16"), []string{"spec.cidr", "is not a network"}},
		{"network with negative preallocation", &ipamv1alpha1.Network{ObjectMeta: meta, Spec: ipamv1alpha1.NetworkSpec{CIDR: "10.70.0.0/16", PreAllocated: -1}}, []string{"spec.preAllocated", "greater than or equal to 0"}},
		{"IP out of range", ip("10.0.0.256"), []string{`"10.0.0.256" is not an IPv4 address`}},
		{"IP with leading zeros", ip("010.0.0.1"), []string{`"010.0.0.1" is not an IPv4 address`}},
		{"IPv6 IP", ip("fd00::1"), []string{`"fd00::1" is not an IPv4 address`}},
		{"IP that is a CIDR", ip("10.0.0.1/32"), []string{"spec.ip", "is not an IPv4 address"}},
	}
	for _, tc := range creations {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Create(ctx, tc.obj)
			if err == nil {
				_ = c.Delete(ctx, tc.obj) // let the next cases reuse the name
			}
			wantRefusal(t, "creating", err, tc.want...)
		})
	}

	// The bounds themselves are accepted.
	accepted := []struct {
		name string
		obj  client.Object
	}{
		{"smallest MTU and port", server(netv1beta1.Endpoint{Port: 1}, 576)},
		{"largest MTU and ports", server(netv1beta1.Endpoint{Port: 65535, ServiceType: corev1.ServiceTypeNodePort, NodePort: ptr.To[int32](65535)}, 9000)},
		{"IPv6 load balancer IP", server(netv1beta1.Endpoint{ServiceType: corev1.ServiceTypeLoadBalancer, LoadBalancerIP: ptr.To("fd00::10")}, 0)},
		{"client to a DNS name", clientTo(65535, "gw.milan.example.com")},
		{"IPv6 CIDRs", conf([]netv1beta1.CIDR{"fd00:10:244::/56"}, []netv1beta1.CIDR{"fd00:10:70::/64"})},
		{"public key of 32 bytes", key(32)},
		// Standard base64 has '+' and '/': the API server's CEL, which
		// decodes format-byte strings as URL-safe base64, refused such
		// keys, one in four generated ones.
		{"public key with + and /", &netv1beta1.PublicKey{ObjectMeta: meta, Spec: netv1beta1.PublicKeySpec{PublicKey: bytes.Repeat([]byte{0xfb, 0xff, 0xbf}, 11)[:32]}}},
	}
	for _, tc := range accepted {
		t.Run(tc.name, func(t *testing.T) {
			if err := c.Create(ctx, tc.obj); err != nil {
				t.Fatalf("refused: %v", err)
			}
			if err := c.Delete(ctx, tc.obj); err != nil {
				t.Fatal(err)
			}
		})
	}

	// What the Go types cannot send: a key that is not base64 and a port that
	// is not a number.
	manifests := []struct{ name, manifest, want string }{
		{"public key not base64", "apiVersion: networking.liqo.io/v1beta1\nkind: PublicKey\nmetadata:\n  name: milan\n  namespace: " + ns +
			"\nspec:\n  publicKey: 'not base64!'\n", "spec.publicKey"},
		{"port as text", "apiVersion: networking.liqo.io/v1beta1\nkind: GatewayServer\nmetadata:\n  name: milan\n  namespace: " + ns +
			"\nspec:\n  endpoint:\n    port: http\n", "spec.endpoint.port"},
	}
	for _, m := range manifests {
		t.Run(m.name, func(t *testing.T) {
			out, err := kubectl(t, m.manifest, "create", "-f", "-")
			if err == nil || !strings.Contains(out, m.want) {
				t.Errorf("got err=%v, want a refusal naming %q:\n%s", err, m.want, out)
			}
		})
	}

	// Status is validated too, whoever writes it.
	t.Run("status", func(t *testing.T) {
		cf := conf([]netv1beta1.CIDR{"10.244.0.0/16"}, ext)
		if err := c.Create(ctx, cf); err != nil {
			t.Fatal(err)
		}
		cf.Status.Remote = &netv1beta1.ClusterConfig{CIDR: netv1beta1.ClusterConfigCIDR{Pod: []netv1beta1.CIDR{"10.71.0.0/15"}}}
		wantRefusal(t, "a remapped CIDR with host bits", c.Status().Update(ctx, cf), "status.remote.cidr.pod[0]", "zero host bits")

		gws := server(netv1beta1.Endpoint{}, 0)
		if err := c.Create(ctx, gws); err != nil {
			t.Fatal(err)
		}
		gws.Status.Endpoint = &netv1beta1.EndpointStatus{Addresses: []netv1beta1.Address{"bad_host!"}, Port: 51840}
		wantRefusal(t, "a server address that is no host", c.Status().Update(ctx, gws), `"bad_host!" is neither an IP address nor a DNS name`)

		conn := &netv1beta1.Connection{ObjectMeta: meta, Spec: netv1beta1.ConnectionSpec{Type: netv1beta1.ClientConnection}}
		if err := c.Create(ctx, conn); err != nil {
			t.Fatal(err)
		}
		conn.Status.Value = "Up"
		wantRefusal(t, "a connection state of no known value", c.Status().Update(ctx, conn), "status.value", "Unsupported value")
	})

	t.Run("immutable", func(t *testing.T) {
		nw := network("10.244.0.0/16")
		nw.Spec.PreAllocated = 1
		if err := c.Create(ctx, nw); err != nil {
			t.Fatal(err)
		}
		changed := nw.DeepCopy()
		changed.Spec.CIDR = "10.245.0.0/16"
		wantRefusal(t, "changing a Network's cidr", c.Update(ctx, changed), "cidr is immutable")
		changed = nw.DeepCopy()
		changed.Spec.PreAllocated = 2
		wantRefusal(t, "changing a Network's preAllocated", c.Update(ctx, changed), "preAllocated is immutable")
		// Dropping the field is a change too: it defaults to 0.
		drop := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"preAllocated":null}}`))
		wantRefusal(t, "removing a Network's preAllocated", c.Patch(ctx, nw.DeepCopy(), drop), "preAllocated is immutable")
		got := &ipamv1alpha1.Network{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(nw), got); err != nil || got.Spec != nw.Spec {
			t.Errorf("after the refusals the Network is %+v (%v), want %+v", got.Spec, err, nw.Spec)
		}

		addr := ip("10.96.0.1")
		if err := c.Create(ctx, addr); err != nil {
			t.Fatal(err)
		}
		moved := addr.DeepCopy()
		moved.Spec.IP = "10.96.0.2"
		wantRefusal(t, "changing an IP's ip", c.Update(ctx, moved), "ip is immutable")
		addr.Status.IP, addr.Status.CIDR = "10.70.0.5", "10.70.0.0/16"
		if err := c.Status().Update(ctx, addr); err != nil {
			t.Fatalf("allocating the IP: %v", err)
		}
		realloc := addr.DeepCopy()
		realloc.Status.IP, realloc.Status.CIDR = "10.70.0.6", "10.71.0.0/16"
		wantRefusal(t, "changing an allocated IP", c.Status().Update(ctx, realloc),
			"status.ip is immutable once allocated", "status.cidr is immutable once allocated")
	})
}
