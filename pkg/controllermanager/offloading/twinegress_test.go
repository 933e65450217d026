package offloading

import (
	"net/netip"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/liqo-go/liqo/pkg/consts"
)

// egressAllows tells whether spec lets a pod connect to dst, an address no
// pod or namespace selector stands for (the rules' IP blocks alone).
func egressAllows(spec networkingv1.NetworkPolicySpec, dst netip.Addr) bool {
	for _, rule := range spec.Egress {
		if len(rule.To) == 0 {
			return true
		}
		for _, peer := range rule.To {
			if peer.IPBlock == nil {
				continue
			}
			if !netip.MustParsePrefix(peer.IPBlock.CIDR).Contains(dst) {
				continue
			}
			if !slices.ContainsFunc(peer.IPBlock.Except, func(e string) bool { return netip.MustParsePrefix(e).Contains(dst) }) {
				return true
			}
		}
	}
	return false
}

// egressSelects tells whether spec lets a pod connect to the pods labelled
// pod in a namespace labelled ns, on any port.
func egressSelects(t *testing.T, spec networkingv1.NetworkPolicySpec, ns, pod map[string]string) bool {
	t.Helper()
	for _, rule := range spec.Egress {
		for _, peer := range rule.To {
			if peer.NamespaceSelector == nil {
				continue
			}
			nsSel, err := metav1.LabelSelectorAsSelector(peer.NamespaceSelector)
			if err != nil {
				t.Fatal(err)
			}
			podSel := labels.Everything()
			if peer.PodSelector != nil {
				if podSel, err = metav1.LabelSelectorAsSelector(peer.PodSelector); err != nil {
					t.Fatal(err)
				}
			}
			if nsSel.Matches(labels.Set(ns)) && podSel.Matches(labels.Set(pod)) {
				return true
			}
		}
	}
	return false
}

// TestTwinEgressPolicySpec: the pods of genoa's twins reach DNS, genoa's
// other twins, genoa's cluster through the fabric, the provider's extra
// networks and the internet; not the metadata service, the provider's
// nodes (private or public), pods and Services, nor other tenants' twins
// or clusters.
func TestTwinEgressPolicySpec(t *testing.T) {
	o := EgressOptions{Mode: EgressPolicyDefault,
		AllowedCIDRs: []netip.Prefix{netip.MustParsePrefix("10.50.0.0/16")},
		// A public service CIDR, a private pod CIDR.
		Local: []netip.Prefix{netip.MustParsePrefix("10.244.0.0/16"), netip.MustParsePrefix("198.51.100.0/24")}}
	nodes := []netip.Addr{netip.MustParseAddr("192.168.1.10"), netip.MustParseAddr("203.0.113.7")}
	spec := twinEgressPolicySpec("genoa", []string{"10.71.0.0/16", "10.72.0.0/16"}, nodes, o)

	if len(spec.PodSelector.MatchLabels)+len(spec.PodSelector.MatchExpressions) != 0 ||
		!slices.Equal(spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeEgress}) {
		t.Fatalf("the policy does not hold every pod's egress: %+v", spec)
	}
	for _, c := range []struct {
		dst  string
		want bool
		what string
	}{
		{"8.8.8.8", true, "the internet"},
		{"10.71.3.4", true, "genoa's pods, remapped"},
		{"10.72.0.1", true, "genoa's external network (its API server), remapped"},
		{"10.50.9.9", true, "the provider's extra network"},
		{"169.254.169.254", false, "the metadata service"},
		{"100.100.100.200", false, "a metadata service in the shared range"},
		{"192.168.1.10", false, "a private node address"},
		{"203.0.113.7", false, "a public node address"},
		{"10.244.3.3", false, "the provider's pods (its webhooks, other tenants' pods)"},
		{"198.51.100.10", false, "the provider's Services, on a public range"},
		{"10.96.0.1", false, "a Service in a private range"},
		{"10.73.0.1", false, "another consumer's cluster, remapped"},
		{"127.0.0.1", false, "loopback"},
	} {
		if got := egressAllows(spec, netip.MustParseAddr(c.dst)); got != c.want {
			t.Errorf("%s (%s): allowed %v, want %v", c.what, c.dst, got, c.want)
		}
	}

	twin := func(consumer string) map[string]string {
		return map[string]string{consts.TwinNamespaceLabel: "true", consts.RemoteClusterIDLabel: consumer}
	}
	kubeSystem := map[string]string{"kubernetes.io/metadata.name": "kube-system"}
	for _, c := range []struct {
		ns, pod map[string]string
		want    bool
		what    string
	}{
		{twin("genoa"), nil, true, "genoa's twins"},
		{twin("turin"), nil, false, "another tenant's twin"},
		{map[string]string{consts.TenantNamespaceLabel: "true", consts.RemoteClusterIDLabel: "genoa"}, nil, false, "genoa's tenant namespace (the provider's gateway)"},
		{map[string]string{"kubernetes.io/metadata.name": "liqo"}, map[string]string{"app.kubernetes.io/name": "liqo-controller-manager"}, false, "the controller manager and webhooks"},
		{kubeSystem, map[string]string{"k8s-app": "kube-dns"}, true, "DNS"},
		{kubeSystem, map[string]string{"component": "kube-apiserver"}, false, "another kube-system pod"},
	} {
		if got := egressSelects(t, spec, c.ns, c.pod); got != c.want {
			t.Errorf("%s: allowed %v, want %v", c.what, got, c.want)
		}
	}
	for _, rule := range spec.Egress {
		for _, peer := range rule.To {
			if peer.NamespaceSelector != nil && peer.PodSelector != nil && len(rule.Ports) == 0 {
				t.Errorf("DNS is open on every port: %+v", rule)
			}
		}
	}

	// Nodes listed in another order give the same policy: no update at
	// each reconcile.
	reversed := slices.Clone(nodes)
	slices.Reverse(reversed)
	if again := twinEgressPolicySpec("genoa", []string{"10.71.0.0/16", "10.72.0.0/16"}, reversed, o); !equality.Semantic.DeepEqual(again, spec) {
		t.Errorf("the policy depends on the nodes' order:\n%+v\n%+v", spec, again)
	}
}

// TestNodeAddressesChanged: the egress policies follow the nodes'
// addresses, not their heartbeats.
func TestNodeAddressesChanged(t *testing.T) {
	node := func(addr, heartbeat string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{"beat": heartbeat}},
			Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: addr}}}}
	}
	if nodeAddressesChanged.Update(event.UpdateEvent{ObjectOld: node("10.0.0.1", "a"), ObjectNew: node("10.0.0.1", "b")}) {
		t.Error("a heartbeat passes")
	}
	if !nodeAddressesChanged.Update(event.UpdateEvent{ObjectOld: node("10.0.0.1", "a"), ObjectNew: node("203.0.113.7", "a")}) {
		t.Error("a new address does not pass")
	}
}
