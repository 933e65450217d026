package trust

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/liqo-go/liqo/pkg/ipam"
	"github.com/liqo-go/liqo/pkg/mcs/merge"
)

func good() merge.Export {
	return merge.Export{
		Cluster: "milan", Type: mcsv1beta1.ClusterSetIP,
		Ports: []mcsv1beta1.ServicePort{
			{Name: "tcp", Protocol: corev1.ProtocolTCP, Port: 42},
			{Name: "udp", Protocol: corev1.ProtocolUDP, Port: 42},
		},
		SessionAffinity: corev1.ServiceAffinityNone, IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
		Labels: map[string]string{"app.example.com/tier": "web"}, Annotations: map[string]string{"note": "anything goes here"},
	}
}

// TestExport sends the hostile exports a peer could publish: each is
// refused with an error naming the fault, and a well-formed one passes.
func TestExport(t *testing.T) {
	tests := []struct {
		name string
		edit func(*merge.Export)
		want string // in the error; "" for none
	}{
		{name: "well formed", edit: func(*merge.Export) {}},
		{name: "another cluster's export", edit: func(e *merge.Export) { e.Cluster = "naples" }, want: `claiming cluster "naples"`},
		{name: "the receiver's own export", edit: func(e *merge.Export) { e.Cluster = "rome" }, want: `claiming cluster "rome"`},
		{name: "unknown type", edit: func(e *merge.Export) { e.Type = "LoadBalancer" }, want: "neither ClusterSetIP nor Headless"},
		{name: "port 0", edit: func(e *merge.Export) { e.Ports[0].Port = 0 }, want: "not in 1-65535"},
		{name: "port 70000", edit: func(e *merge.Export) { e.Ports[0].Port = 70000 }, want: "not in 1-65535"},
		{name: "unknown protocol", edit: func(e *merge.Export) { e.Ports[0].Protocol = "ICMP" }, want: "not TCP, UDP or SCTP"},
		{name: "duplicate port name", edit: func(e *merge.Export) { e.Ports[1].Name = "tcp" }, want: "used twice"},
		{name: "unnamed port among several", edit: func(e *merge.Export) { e.Ports[1].Name = "" }, want: "has no name"},
		{name: "bad port name", edit: func(e *merge.Export) { e.Ports[0].Name = "Not_A_Label" }, want: `port name "Not_A_Label"`},
		{name: "bad session affinity", edit: func(e *merge.Export) { e.SessionAffinity = "Sticky" }, want: "session affinity"},
		{name: "bad internal traffic policy", edit: func(e *merge.Export) {
			e.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicy("Everywhere"))
		}, want: "internal traffic policy"},
		{name: "bad IP family", edit: func(e *merge.Export) { e.IPFamilies = []corev1.IPFamily{"IPX"} }, want: `IP family "IPX"`},
		{name: "three IP families", edit: func(e *merge.Export) {
			e.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol, corev1.IPv4Protocol}
		}, want: "at most 2"},
		{name: "bad label key", edit: func(e *merge.Export) { e.Labels = map[string]string{"a b": "x"} }, want: `exported label "a b"`},
		{name: "bad label value", edit: func(e *merge.Export) { e.Labels = map[string]string{"k": strings.Repeat("v", 64)} }, want: "exported label"},
		{name: "bad annotation key", edit: func(e *merge.Export) { e.Annotations = map[string]string{"/x": "y"} }, want: `exported annotation "/x"`},
		{name: "every fault at once", edit: func(e *merge.Export) { e.Cluster, e.Type = "naples", "X" }, want: "neither ClusterSetIP"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := good()
			tt.edit(&e)
			err := Export("milan", e)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "cluster milan")):
				t.Fatalf("error %v, want one naming milan and %q", err, tt.want)
			}
		})
	}
}

func endpoints(addrs ...string) []discoveryv1.Endpoint {
	var eps []discoveryv1.Endpoint
	for _, a := range addrs {
		eps = append(eps, discoveryv1.Endpoint{Addresses: []string{a}, Hostname: ptr.To("h")})
	}
	return eps
}

// TestEndpointNames: an endpoint without a hostname is named after its
// address in its own cluster, not the remapped one, so that its DNS name
// is the same in every cluster.
func TestEndpointNames(t *testing.T) {
	cidrs, err := ipam.NewMapping([]string{"10.244.0.0/16"}, []string{"10.71.0.0/16"})
	if err != nil {
		t.Fatal(err)
	}
	in := []discoveryv1.Endpoint{
		{Addresses: []string{"10.244.0.23"}},
		{Addresses: []string{"10.244.0.24"}, Hostname: ptr.To("web-0")},
	}
	got, err := Endpoints("milan", cidrs, in)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct{ addr, host string }{
		{"10.71.0.23", "10-244-0-23"}, {"10.71.0.24", "web-0"},
	} {
		if got[i].Addresses[0] != want.addr || got[i].Hostname == nil || *got[i].Hostname != want.host {
			t.Errorf("endpoint %d: %v %v, want %s named %s", i, got[i].Addresses, got[i].Hostname, want.addr, want.host)
		}
	}
	if in[0].Hostname != nil {
		t.Error("the input was modified")
	}
	// IPv6 addresses are named the same way; one making no label, none.
	if n := addressName("fd00:10:244::7"); n == nil || *n != "fd00-10-244--7" {
		t.Errorf("addressName(fd00:10:244::7) = %v", n)
	}
	if n := addressName("::1"); n != nil {
		t.Errorf("addressName(::1) = %q, want none", *n)
	}
}

// TestEndpoints: milan's pod CIDR 10.244.0.0/16 overlaps the receiver's
// and is reached at 10.71.0.0/16; its external CIDR is not remapped.
// Addresses of milan's networks are translated; any other is refused,
// with the whole set.
func TestEndpoints(t *testing.T) {
	cidrs, err := ipam.NewMapping([]string{"10.244.0.0/16", "10.80.0.0/16"}, []string{"10.71.0.0/16", "10.80.0.0/16"})
	if err != nil {
		t.Fatal(err)
	}
	in := endpoints("10.244.1.7", "10.80.3.4")
	got, err := Endpoints("milan", cidrs, in)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Addresses[0] != "10.71.1.7" || got[1].Addresses[0] != "10.80.3.4" || *got[0].Hostname != "h" {
		t.Errorf("translated %v", got)
	}
	if in[0].Addresses[0] != "10.244.1.7" {
		t.Error("the input was modified")
	}

	for _, hostile := range []struct{ addr, want string }{
		{"10.96.0.1", "not in the cluster's own networks"},       // the receiver's kubernetes Service
		{"10.71.1.7", "not in the cluster's own networks"},       // already "translated": another cluster's range here
		{"169.254.169.254", "not in the cluster's own networks"}, // the metadata service
		{"192.168.1.10", "not in the cluster's own networks"},    // a node
		{"::ffff:10.244.1.7", "not in the cluster's own networks"},
		{"example.com", "not an IP address"},
		{"", "not an IP address"},
	} {
		_, err := Endpoints("milan", cidrs, endpoints("10.244.1.8", hostile.addr))
		if err == nil || !strings.Contains(err.Error(), hostile.want) || !strings.Contains(err.Error(), "cluster milan") {
			t.Errorf("endpoint %q: %v, want a refusal saying %q", hostile.addr, err, hostile.want)
		}
	}
	// A hostname that is no DNS label would fail the import's write, or
	// name something else than a pod: refused.
	for _, host := range []string{"a.b", "Upper", "-x", strings.Repeat("x", 64), ""} {
		eps := endpoints("10.244.1.8")
		eps[0].Hostname = ptr.To(host)
		if _, err := Endpoints("milan", cidrs, eps); err == nil || !strings.Contains(err.Error(), "hostname") {
			t.Errorf("hostname %q: %v, want a refusal", host, err)
		}
	}
	// No network fabric with milan: nothing of it can be reached or checked.
	if _, err := Endpoints("milan", ipam.Mapping{}, endpoints("10.244.1.8")); err == nil {
		t.Error("endpoints accepted with no mapping of the sender's networks")
	}
}
