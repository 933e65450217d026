package gateway

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	ipamv1alpha1 "github.com/liqo-go/liqo/apis/ipam/v1alpha1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

func node(name, ip string, cidrs ...string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:   corev1.NodeSpec{PodCIDRs: cidrs},
		Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}}}
}

func config(real, remapped []netv1beta1.CIDR) *netv1beta1.Configuration {
	c := &netv1beta1.Configuration{ObjectMeta: metav1.ObjectMeta{Name: "milan"}}
	c.Spec.Remote.CIDR.Pod = real
	c.Status.Remote = &netv1beta1.ClusterConfig{CIDR: netv1beta1.ClusterConfigCIDR{Pod: remapped}}
	return c
}

func TestDesired(t *testing.T) {
	key := make([]byte, 32)
	key[0] = 7
	pk := &netv1beta1.PublicKey{ObjectMeta: metav1.ObjectMeta{Name: "milan"}, Spec: netv1beta1.PublicKeySpec{PublicKey: key}}
	virtual := node("liqo-milan", "172.31.1.50", "10.244.9.0/24")
	virtual.Labels = map[string]string{consts.TypeLabel: consts.TypeVirtualNode}
	nodes := []corev1.Node{node("b", "172.31.1.11", "10.244.2.0/24"), node("a", "172.31.1.10", "10.244.1.0/24", "fd00::/64"), virtual}

	s, err := Desired("uid", pk, config([]netv1beta1.CIDR{"10.244.0.0/16"}, []netv1beta1.CIDR{"10.71.0.0/16"}), nodes)
	if err != nil {
		t.Fatal(err)
	}
	if string(s.PeerKey) != string(key) {
		t.Fatal("peer key not taken")
	}
	want := Pair{Real: netip.MustParsePrefix("10.244.0.0/16"), Remapped: netip.MustParsePrefix("10.71.0.0/16")}
	if len(s.Pod) != 1 || s.Pod[0] != want {
		t.Fatalf("pod pairs %v", s.Pod)
	}
	if len(s.Nodes) != 2 || s.Nodes[0].Name != "a" || s.Nodes[1].Name != "b" {
		t.Fatalf("nodes %+v: want a and b, sorted, without the virtual node", s.Nodes)
	}
	if a := s.Nodes[0]; a.Address != netip.MustParseAddr("172.31.1.10") || len(a.PodCIDRs) != 1 || a.VNI != OverlayVNI("uid", "a") {
		t.Fatalf("node a %+v: the IPv6 CIDR must be left out", a)
	}

	// Nothing yet: no key, no configuration; nothing applied, no error.
	if s, err := Desired("uid", nil, nil, nil); err != nil || s.PeerKey != nil || s.Pod != nil {
		t.Fatalf("empty state %+v, %v", s, err)
	}
}

// TestDesiredRefusesHostileInput: what a peer announces is checked before
// it reaches NAT rules and routes; a bad entry is left out and named.
func TestDesiredRefusesHostileInput(t *testing.T) {
	for _, c := range []struct {
		name     string
		pk       *netv1beta1.PublicKey
		cfg      *netv1beta1.Configuration
		nodes    []corev1.Node
		mentions string
	}{
		{"short key", &netv1beta1.PublicKey{ObjectMeta: metav1.ObjectMeta{Name: "k"}, Spec: netv1beta1.PublicKeySpec{PublicKey: []byte("x")}}, nil, nil, "1 bytes"},
		{"sizes differ", nil, config([]netv1beta1.CIDR{"10.244.0.0/16"}, []netv1beta1.CIDR{"10.71.0.0/24"}), nil, "another size"},
		{"lists differ", nil, config([]netv1beta1.CIDR{"10.244.0.0/16", "10.245.0.0/16"}, []netv1beta1.CIDR{"10.71.0.0/16"}), nil, "2 pod CIDRs but 1"},
		{"host bits", nil, config([]netv1beta1.CIDR{"10.244.1.5/16"}, []netv1beta1.CIDR{"10.71.0.0/16"}), nil, "host bits"},
		{"everything", nil, config([]netv1beta1.CIDR{"0.0.0.0/0"}, []netv1beta1.CIDR{"0.0.0.0/0"}), nil, "every address"},
		{"garbage", nil, config([]netv1beta1.CIDR{"10.244.0.0/16; drop"}, []netv1beta1.CIDR{"10.71.0.0/16"}), nil, "pod CIDR"},
		{"IPv6", nil, config([]netv1beta1.CIDR{"fd00::/64"}, []netv1beta1.CIDR{"fd01::/64"}), nil, "IPv4"},
		{"node without pod CIDR", nil, nil, []corev1.Node{node("x", "172.31.1.10")}, "no IPv4 pod CIDR"},
		{"node without address", nil, nil, []corev1.Node{node("y", "", "10.244.3.0/24")}, "no IPv4 internal address"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Desired("uid", c.pk, c.cfg, c.nodes)
			if err == nil || !strings.Contains(err.Error(), c.mentions) {
				t.Fatalf("error %v, want one mentioning %q", err, c.mentions)
			}
			if s.PeerKey != nil || len(s.Pod) != 0 || len(s.Nodes) != 0 {
				t.Fatalf("refused input still in the state: %+v", s)
			}
		})
	}
}

// TestLocalIPs: allocated IPs become twin → address pairs, sorted; one not
// allocated yet is skipped; bad addresses and a twin claimed twice are
// left out and reported.
func TestLocalIPs(t *testing.T) {
	ip := func(name, real, twin string, masq bool) ipamv1alpha1.IP {
		return ipamv1alpha1.IP{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "liqo"},
			Spec: ipamv1alpha1.IPSpec{IP: netv1beta1.IP(real), Masquerade: &masq}, Status: ipamv1alpha1.IPStatus{IP: netv1beta1.IP(twin)}}
	}
	got, err := LocalIPs([]ipamv1alpha1.IP{
		ip("node", "172.31.1.10", "10.70.0.2", false),
		ip("api-server", "10.96.0.1", "10.70.0.1", true),
		ip("pending", "172.31.1.11", "", false),
		ip("v6", "fd00::1", "10.70.0.3", false),
		ip("twice", "172.31.1.12", "10.70.0.1", false),
	})
	want := []LocalIP{
		{Real: netip.MustParseAddr("10.96.0.1"), Twin: netip.MustParseAddr("10.70.0.1"), Masquerade: true},
		{Real: netip.MustParseAddr("172.31.1.10"), Twin: netip.MustParseAddr("10.70.0.2")},
	}
	if !slices.Equal(got, want) {
		t.Errorf("LocalIPs = %+v, want %+v", got, want)
	}
	if err == nil || !strings.Contains(err.Error(), "liqo/v6") || !strings.Contains(err.Error(), "liqo/twice") {
		t.Errorf("err = %v, want liqo/v6 and liqo/twice reported", err)
	}
}
