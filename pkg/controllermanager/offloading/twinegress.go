package offloading

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/liqo-go/liqo/pkg/consts"
)

// TwinEgressPolicyName is the NetworkPolicy bounding where the pods of a
// twin may connect to.
const TwinEgressPolicyName = "liqo-tenant-egress"

// The modes of --twin-egress-policy.
const (
	EgressPolicyDefault = "default"
	EgressPolicyOff     = "off"
)

// EgressOptions set the egress policy of the twins: a consumer's pods run
// on the provider's nodes, next to its metadata service, its nodes' ports,
// its controller manager and webhooks, and other tenants' pods, none of
// which are theirs to reach.
type EgressOptions struct {
	// Mode is EgressPolicyDefault (each twin gets the policy) or
	// EgressPolicyOff (none; policies made before are removed).
	Mode string
	// AllowedCIDRs are networks the provider lets its consumers' pods
	// reach besides the defaults (a node-local DNS cache, a proxy, a
	// shared service inside the private ranges).
	AllowedCIDRs []netip.Prefix
	// Local are this cluster's own networks (pod, service and external
	// CIDRs, reserved subnets), kept from the pods when they are outside
	// the private ranges; the manager fills them in from its IPAM options.
	Local []netip.Prefix
}

// AddFlags binds o to the provider's command-line flags.
func (o *EgressOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Mode, "twin-egress-policy", o.Mode,
		"default: each twin namespace gets the NetworkPolicy "+TwinEgressPolicyName+", letting the consumer's pods reach DNS, its own twins, "+
			"its own cluster through the network fabric and public addresses only (not the metadata service, the nodes, this cluster's pods and Services, "+
			"other tenants); off: none")
	fs.Var(&prefixesValue{&o.AllowedCIDRs}, "twin-egress-allowed-cidrs",
		"comma-separated IPv4 networks the consumers' pods may reach besides what --twin-egress-policy=default allows")
}

// Validate reports a bad mode.
func (o EgressOptions) Validate() error {
	if o.Mode != EgressPolicyDefault && o.Mode != EgressPolicyOff {
		return fmt.Errorf("--twin-egress-policy must be %s or %s, got %q", EgressPolicyDefault, EgressPolicyOff, o.Mode)
	}
	return nil
}

// notInternet are the IPv4 ranges a pod's connection to "the internet"
// never goes to: private, shared (CGNAT), loopback, link-local (the cloud
// metadata services, 169.254.169.254), this-network, multicast and
// reserved. Other tenants' pods and clusters, the provider's nodes and
// Services normally live in them.
var notInternet = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("169.254.0.0/16"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("224.0.0.0/4"),
	netip.MustParsePrefix("240.0.0.0/4"),
}

// DNS is where the pods resolve names: kube-system's kube-dns pods
// (CoreDNS keeps the label), on port 53.
var (
	dnsPods      = map[string]string{"k8s-app": "kube-dns"}
	dnsNamespace = map[string]string{corev1.LabelMetadataName: "kube-system"}
)

// twinEgressPolicySpec lets every pod of a consumer's twin connect only
// to: DNS; its own twins (the same consumer's, by their labels); the
// consumer's own pod and external networks as this cluster sees them
// (consumerNets: the fabric carries its pods' connections back to the
// consumer's pods, Services and API server under those addresses); the
// provider's extra networks; and the internet, which is every IPv4 address
// but notInternet and the provider's own addresses outside it (public node
// addresses, public pod or service networks). Everything else, the
// metadata service, the nodes, the provider's pods and Services (its
// controller manager and webhooks), other tenants' pods and clusters, is
// denied, where the CNI enforces NetworkPolicies.
func twinEgressPolicySpec(consumer string, consumerNets []string, nodes []netip.Addr, o EgressOptions) networkingv1.NetworkPolicySpec {
	tcp, udp := corev1.ProtocolTCP, corev1.ProtocolUDP
	dnsPort := intstr.FromInt32(53)
	rules := []networkingv1.NetworkPolicyEgressRule{
		{To: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{MatchLabels: dnsNamespace},
			PodSelector: &metav1.LabelSelector{MatchLabels: dnsPods}}},
			Ports: []networkingv1.NetworkPolicyPort{{Protocol: &udp, Port: &dnsPort}, {Protocol: &tcp, Port: &dnsPort}}},
		{To: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: &metav1.LabelSelector{
			MatchLabels: map[string]string{consts.TwinNamespaceLabel: "true", consts.RemoteClusterIDLabel: consumer}}}}},
	}
	var allowed []networkingv1.NetworkPolicyPeer
	for _, n := range consumerNets {
		allowed = append(allowed, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: n}})
	}
	for _, p := range o.AllowedCIDRs {
		allowed = append(allowed, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: p.Masked().String()}})
	}
	allowed = append(allowed, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0", Except: internetExcept(o.Local, nodes)}})
	rules = append(rules, networkingv1.NetworkPolicyEgressRule{To: allowed})
	return networkingv1.NetworkPolicySpec{
		PodSelector: metav1.LabelSelector{},
		PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeEgress},
		Egress:      rules,
	}
}

// internetExcept is what 0.0.0.0/0 excepts: notInternet, and the provider's
// own networks and node addresses not already inside it, sorted and
// without repeats (the policy must come out the same for the same input).
func internetExcept(local []netip.Prefix, nodes []netip.Addr) []string {
	out := slices.Clone(notInternet)
	inside := func(p netip.Prefix) bool {
		return slices.ContainsFunc(out, func(q netip.Prefix) bool { return q.Bits() <= p.Bits() && q.Contains(p.Addr()) })
	}
	add := func(p netip.Prefix) {
		if p.IsValid() && p.Addr().Is4() && p.Bits() > 0 && !inside(p.Masked()) {
			out = append(out, p.Masked())
		}
	}
	for _, p := range local {
		add(p)
	}
	for _, a := range nodes {
		add(netip.PrefixFrom(a.Unmap(), 32))
	}
	slices.SortFunc(out, func(a, b netip.Prefix) int {
		if c := a.Addr().Compare(b.Addr()); c != 0 {
			return c
		}
		return a.Bits() - b.Bits()
	})
	s := make([]string, len(out))
	for i, p := range out {
		s[i] = p.String()
	}
	return s
}

// prefixesValue parses comma-separated IPv4 networks.
type prefixesValue struct{ l *[]netip.Prefix }

func (v *prefixesValue) String() string {
	if v.l == nil {
		return ""
	}
	s := make([]string, len(*v.l))
	for i, p := range *v.l {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

func (v *prefixesValue) Set(s string) error {
	var out []netip.Prefix
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return err
		}
		if !p.Addr().Is4() {
			return fmt.Errorf("%s: only IPv4 networks", p)
		}
		out = append(out, p.Masked())
	}
	*v.l = out
	return nil
}

func (v *prefixesValue) Type() string { return "cidrs" }
