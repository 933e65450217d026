package ipam

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1alpha1 "github.com/liqo-go/liqo/apis/ipam/v1alpha1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/kit"
)

func newNamespace(t *testing.T, name string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := cl.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Delete(context.Background(), ns) })
	return name
}

func createConfiguration(t *testing.T, ns, peer string, pod, external []string) {
	t.Helper()
	c := &netv1beta1.Configuration{
		ObjectMeta: metav1.ObjectMeta{Name: peer, Namespace: ns, Labels: map[string]string{consts.RemoteClusterIDLabel: peer}},
	}
	for _, p := range pod {
		c.Spec.Remote.CIDR.Pod = append(c.Spec.Remote.CIDR.Pod, netv1beta1.CIDR(p))
	}
	for _, e := range external {
		c.Spec.Remote.CIDR.External = append(c.Spec.Remote.CIDR.External, netv1beta1.CIDR(e))
	}
	if err := cl.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls obj until cond holds, and fails the test with what it last
// saw otherwise.
func waitFor[T client.Object](t *testing.T, obj T, what string, cond func(T) bool) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return cond(obj), nil
	})
	if err != nil {
		t.Fatalf("%s %s: %v; last seen: %+v", what, client.ObjectKeyFromObject(obj), err, obj)
	}
	return obj
}

func configured(c *netv1beta1.Configuration) bool {
	return kit.IsTrue(c.Status.Conditions, netv1beta1.NetworkCIDRsConfiguredCondition) &&
		c.Labels[netv1beta1.ConfiguredLabel] == "true"
}

func configuration(ns, name string) *netv1beta1.Configuration {
	return &netv1beta1.Configuration{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
}

func prefixes(cs []netv1beta1.CIDR) []netip.Prefix {
	var out []netip.Prefix
	for _, c := range cs {
		out = append(out, netip.MustParsePrefix(string(c)))
	}
	return out
}

// TestConfigurationRemapping peers one cluster with three others: two use
// the same pod and external CIDRs as this one (as every kubeadm or testbed
// cluster does), one a CIDR that collides with nothing. Each overlapping
// CIDR gets a free network of its size, distinct from every other one; the
// free one keeps its value; the local networks are published.
func TestConfigurationRemapping(t *testing.T) {
	o := testOptions(newNamespace(t, "liqo-remap"))
	startManager(t, o)

	for name, want := range map[string]string{"pod-cidr": "10.244.0.0/16", "service-cidr": "10.96.0.0/12", "external-cidr": "10.70.0.0/16", "reserved-subnet-0": "172.31.0.0/16"} {
		n := waitFor(t, &ipamv1alpha1.Network{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: o.Namespace}}, "local Network", func(n *ipamv1alpha1.Network) bool {
			return kit.IsTrue(n.Status.Conditions, ipamv1alpha1.AllocatedCondition)
		})
		if string(n.Status.CIDR) != want || n.Labels[ipamv1alpha1.NetworkNotRemappedLabel] != "true" {
			t.Errorf("Network %s: cidr %s labels %v, want %s not remapped", name, n.Status.CIDR, n.Labels, want)
		}
	}

	ns := newNamespace(t, "liqo-tenant-remap")
	createConfiguration(t, ns, "milan", []string{"10.244.0.0/16"}, []string{"10.70.0.0/16"})
	createConfiguration(t, ns, "paris", []string{"10.244.0.0/16"}, []string{"10.70.0.0/16"})
	createConfiguration(t, ns, "oslo", []string{"192.168.50.0/24"}, []string{"192.168.51.0/24"})

	local := []netip.Prefix{o.PodCIDR, o.ServiceCIDR, o.ExternalCIDR, o.Reserved[0]}
	var seen []netip.Prefix
	for _, peer := range []string{"milan", "paris", "oslo"} {
		c := waitFor(t, configuration(ns, peer), "Configuration", configured)
		if c.Spec.Local == nil || fmt.Sprint(c.Spec.Local.CIDR.Pod) != "[10.244.0.0/16]" || fmt.Sprint(c.Spec.Local.CIDR.External) != "[10.70.0.0/16]" {
			t.Errorf("%s: spec.local = %+v, want this cluster's pod and external CIDRs", peer, c.Spec.Local)
		}
		spec := append(prefixes(c.Spec.Remote.CIDR.Pod), prefixes(c.Spec.Remote.CIDR.External)...)
		got := append(prefixes(c.Status.Remote.CIDR.Pod), prefixes(c.Status.Remote.CIDR.External)...)
		if len(got) != len(spec) {
			t.Fatalf("%s: status.remote %v for spec %v", peer, got, spec)
		}
		for i, p := range got {
			if p.Bits() != spec[i].Bits() {
				t.Errorf("%s: %s remapped to %s, not the same size", peer, spec[i], p)
			}
			for _, other := range append(append([]netip.Prefix{}, local...), seen...) {
				if p.Overlaps(other) {
					t.Errorf("%s: %s remapped to %s, which overlaps %s", peer, spec[i], p, other)
				}
			}
			seen = append(seen, p)
		}
		if peer == "oslo" && fmt.Sprint(got) != "[192.168.50.0/24 192.168.51.0/24]" {
			t.Errorf("oslo: %v, want its CIDRs kept as they overlap nothing", got)
		}
	}

	// The Networks carry the peer's ID and are owned by the Configuration.
	n := &ipamv1alpha1.Network{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: NetworkName("milan", "pod", netip.MustParsePrefix("10.244.0.0/16"))}}
	if err := cl.Get(context.Background(), client.ObjectKeyFromObject(n), n); err != nil {
		t.Fatal(err)
	}
	if n.Labels[consts.RemoteClusterIDLabel] != "milan" || len(n.OwnerReferences) != 1 || n.OwnerReferences[0].Name != "milan" {
		t.Errorf("Network %s: labels %v owners %v", n.Name, n.Labels, n.OwnerReferences)
	}
}

// TestConfigurationRefusals sends what a confused or hostile peer could
// announce and sees it reported, never allocated half-way.
func TestConfigurationRefusals(t *testing.T) {
	o := testOptions(newNamespace(t, "liqo-refuse"))
	stop := startManager(t, o)
	ns := newNamespace(t, "liqo-tenant-refuse")

	tests := []struct {
		peer          string
		pod, external []string
		reason, says  string
	}{
		// Half the address space, either half (the upper one overlaps
		// nothing local, and was once kept as is).
		{"greedy", []string{"0.0.0.0/1"}, []string{"10.70.0.0/16"}, netv1beta1.ConfigurationReasonRemoteRefused, "wider than /8"},
		{"upper", []string{"10.244.0.0/16"}, []string{"128.0.0.0/1"}, netv1beta1.ConfigurationReasonRemoteRefused, "wider than /8"},
		// The cloud metadata service, the internet, loopback.
		{"metadata", []string{"10.244.0.0/16"}, []string{"169.254.169.254/32"}, netv1beta1.ConfigurationReasonRemoteRefused, "link-local"},
		{"public", []string{"8.8.8.0/24"}, []string{"10.70.0.0/16"}, netv1beta1.ConfigurationReasonRemoteRefused, "not inside a private range"},
		{"loopback", []string{"127.0.0.0/8"}, []string{"10.70.0.0/16"}, netv1beta1.ConfigurationReasonRemoteRefused, "loopback"},
		{"v6", []string{"fd00::/64"}, []string{"10.70.0.0/16"}, netv1beta1.ConfigurationReasonRemoteNotValid, "only IPv4"},
	}
	for _, tt := range tests {
		createConfiguration(t, ns, tt.peer, tt.pod, tt.external)
		// The label follows the status in a write of its own: wait for both.
		c := waitFor(t, configuration(ns, tt.peer), "Configuration", func(c *netv1beta1.Configuration) bool {
			cond := condition(c.Status.Conditions, netv1beta1.NetworkCIDRsConfiguredCondition)
			return cond != nil && cond.Reason == tt.reason && c.Labels[netv1beta1.ConfiguredLabel] != ""
		})
		cond := condition(c.Status.Conditions, netv1beta1.NetworkCIDRsConfiguredCondition)
		if cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, tt.says) || c.Status.Remote != nil || c.Labels[netv1beta1.ConfiguredLabel] != "false" {
			t.Errorf("%s: condition %+v, status.remote %+v, label %q; want False saying %q, nothing remapped", tt.peer, cond, c.Status.Remote, c.Labels[netv1beta1.ConfiguredLabel], tt.says)
		}
		// A refused CIDR changes nothing: not even its valid
		// neighbours get a Network.
		var owned ipamv1alpha1.NetworkList
		if err := cl.List(context.Background(), &owned, client.InNamespace(ns), client.MatchingLabels{ConfigurationLabel: tt.peer}); err != nil || len(owned.Items) != 0 {
			t.Errorf("%s: %d Networks (%v), want none", tt.peer, len(owned.Items), err)
		}
	}

	// A user cannot claim a range as local by labelling a Network.
	n := &ipamv1alpha1.Network{
		ObjectMeta: metav1.ObjectMeta{Name: "claim", Namespace: ns, Labels: map[string]string{ipamv1alpha1.NetworkNotRemappedLabel: "true"}},
		Spec:       ipamv1alpha1.NetworkSpec{CIDR: "10.50.0.0/16"},
	}
	if err := cl.Create(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	waitFor(t, n, "Network", func(n *ipamv1alpha1.Network) bool {
		c := condition(n.Status.Conditions, ipamv1alpha1.AllocatedCondition)
		return c != nil && c.Reason == ReasonNotLocal && n.Status.CIDR == ""
	})

	// Without a pod CIDR the Configuration says what to do.
	stop()
	o.PodCIDR = netip.Prefix{}
	startManager(t, o)
	createConfiguration(t, ns, "early", []string{"10.244.0.0/16"}, []string{"10.70.0.0/16"})
	c := waitFor(t, configuration(ns, "early"), "Configuration", func(c *netv1beta1.Configuration) bool {
		cond := condition(c.Status.Conditions, netv1beta1.NetworkCIDRsConfiguredCondition)
		return cond != nil && cond.Reason == netv1beta1.ConfigurationReasonLocalUnknown
	})
	if !strings.Contains(condition(c.Status.Conditions, netv1beta1.NetworkCIDRsConfiguredCondition).Message, "--pod-cidr") {
		t.Errorf("the condition does not name the flag: %+v", c.Status.Conditions)
	}
}

// TestRestartAndRelease restarts the manager between allocations: what was
// allocated stays, later allocations go around it; deleting a
// Configuration (its Networks go with it) frees its networks for the next
// peer, and IPs keep their addresses across the restart.
func TestRestartAndRelease(t *testing.T) {
	o := testOptions(newNamespace(t, "liqo-restart"))
	// A pool of its own: the other tests' Networks, released while their
	// namespaces go, cannot free a network below the ones this test
	// expects.
	o.Pools = []netip.Prefix{netip.MustParsePrefix("172.16.0.0/12")}
	stop := startManager(t, o)
	ns := newNamespace(t, "liqo-tenant-restart")

	createConfiguration(t, ns, "first", []string{"10.244.0.0/16"}, []string{"10.70.0.0/16"})
	first := waitFor(t, configuration(ns, "first"), "Configuration", configured)
	ip := &ipamv1alpha1.IP{ObjectMeta: metav1.ObjectMeta{Name: "api-server", Namespace: ns}, Spec: ipamv1alpha1.IPSpec{IP: "172.31.0.10"}}
	if err := cl.Create(context.Background(), ip); err != nil {
		t.Fatal(err)
	}
	allocated := func(ip *ipamv1alpha1.IP) bool {
		return kit.IsTrue(ip.Status.Conditions, ipamv1alpha1.AllocatedCondition)
	}
	waitFor(t, ip, "IP", allocated)
	// Each manager of this package's tests has its own api-server IP (in
	// its namespace), all in the same external CIDR: addresses are checked
	// against the others rather than by number.
	apiServer := waitFor(t, &ipamv1alpha1.IP{ObjectMeta: metav1.ObjectMeta{Name: ipamv1alpha1.APIServerIPName, Namespace: o.Namespace}}, "the manager's api-server IP", allocated)
	var kubernetes corev1.Service
	if err := cl.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "kubernetes"}, &kubernetes); err != nil {
		t.Fatal(err)
	}
	if string(apiServer.Spec.IP) != kubernetes.Spec.ClusterIP || apiServer.Spec.Masquerade == nil || !*apiServer.Spec.Masquerade {
		t.Errorf("the api-server IP is %s (masquerade %v), want the kubernetes Service's %s, masqueraded", apiServer.Spec.IP, apiServer.Spec.Masquerade, kubernetes.Spec.ClusterIP)
	}
	taken := allocatedIPs(t, ip)
	if ip.Status.IP == "10.70.0.0" || ip.Status.CIDR != "10.70.0.0/16" || taken[ip.Status.IP] {
		t.Errorf("IP: status %s in %s, want a free address but the first (kept) in 10.70.0.0/16; taken: %v", ip.Status.IP, ip.Status.CIDR, taken)
	}

	stop()
	startManager(t, o)
	createConfiguration(t, ns, "second", []string{"10.244.0.0/16"}, []string{"10.70.0.0/16"})
	second := waitFor(t, configuration(ns, "second"), "Configuration", configured)
	for i, p := range prefixes(second.Status.Remote.CIDR.Pod) {
		for _, q := range append(prefixes(first.Status.Remote.CIDR.Pod), prefixes(first.Status.Remote.CIDR.External)...) {
			if p.Overlaps(q) {
				t.Errorf("after a restart the second peer's pod CIDR %d got %s, overlapping the first's %s", i, p, q)
			}
		}
	}
	ip2 := &ipamv1alpha1.IP{ObjectMeta: metav1.ObjectMeta{Name: "node", Namespace: ns}, Spec: ipamv1alpha1.IPSpec{IP: "172.31.0.11"}}
	if err := cl.Create(context.Background(), ip2); err != nil {
		t.Fatal(err)
	}
	taken[ip.Status.IP] = true
	if waitFor(t, ip2, "IP", allocated); taken[ip2.Status.IP] {
		t.Errorf("after a restart a new IP got %s, which was taken before: %v", ip2.Status.IP, taken)
	}
	before := ip.Status.IP
	if err := cl.Get(context.Background(), client.ObjectKeyFromObject(ip), ip); err != nil || ip.Status.IP != before {
		t.Errorf("the first IP after the restart: %v %+v, want it at %s still", err, ip.Status, before)
	}
	if err := cl.Get(context.Background(), client.ObjectKeyFromObject(first), first); err != nil || !configured(first) {
		t.Errorf("the first Configuration after the restart: %v %+v", err, first.Status)
	}

	// Unpeer the first: its Networks are collected, and a third peer
	// gets the first's pod network back.
	if err := cl.Delete(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var l ipamv1alpha1.NetworkList
		err := cl.List(ctx, &l, client.InNamespace(ns), client.MatchingLabels{ConfigurationLabel: "first"})
		return err == nil && len(l.Items) == 0, nil
	})
	if err != nil {
		t.Fatalf("the first Configuration's Networks were not collected: %v", err)
	}
	createConfiguration(t, ns, "third", []string{"10.244.0.0/16"}, []string{"10.70.0.0/16"})
	third := waitFor(t, configuration(ns, "third"), "Configuration", configured)
	if third.Status.Remote.CIDR.Pod[0] != first.Status.Remote.CIDR.Pod[0] {
		t.Errorf("the third peer's pod CIDR is %s; the first's %s was released and is the first free one", third.Status.Remote.CIDR.Pod[0], first.Status.Remote.CIDR.Pod[0])
	}
}

// allocatedIPs are the addresses every IP but except holds.
func allocatedIPs(t *testing.T, except *ipamv1alpha1.IP) map[netv1beta1.IP]bool {
	t.Helper()
	var l ipamv1alpha1.IPList
	if err := cl.List(context.Background(), &l); err != nil {
		t.Fatal(err)
	}
	out := map[netv1beta1.IP]bool{}
	for _, ip := range l.Items {
		if ip.UID != except.UID && ip.Status.IP != "" {
			out[ip.Status.IP] = true
		}
	}
	return out
}

func condition(conds []metav1.Condition, typ string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

// TestNodeNetworksNeverRouted: the networks around the nodes' addresses
// are this cluster's, though no flag names them. A peer announcing one
// gets it remapped; a peer kept at its own network, where a node joins
// later, is no longer routed, and says so.
func TestNodeNetworksNeverRouted(t *testing.T) {
	o := testOptions(newNamespace(t, "liqo-nodenets"))
	startManager(t, o)
	ns := newNamespace(t, "liqo-tenant-nodenets")
	addNode := func(name, ip string) {
		t.Helper()
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if err := cl.Create(context.Background(), n); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cl.Delete(context.Background(), n) })
		// A patch: the cluster's own controllers write the Node too.
		before := n.DeepCopy()
		n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}, {Type: corev1.NodeHostName, Address: name}}
		if err := cl.Status().Patch(context.Background(), n, client.MergeFrom(before)); err != nil {
			t.Fatal(err)
		}
	}

	addNode("nodenets-a", "192.168.77.10")
	// Alibaba Cloud's metadata service is in the shared address space:
	// a peer's network there is remapped too.
	createConfiguration(t, ns, "onnodes", []string{"192.168.77.0/24"}, []string{"100.100.100.0/24"})
	c := waitFor(t, configuration(ns, "onnodes"), "Configuration", configured)
	for _, p := range append(prefixes(c.Status.Remote.CIDR.Pod), prefixes(c.Status.Remote.CIDR.External)...) {
		for _, local := range []netip.Prefix{netip.MustParsePrefix("192.168.77.0/24"), netip.MustParsePrefix("100.100.100.200/32")} {
			if p.Overlaps(local) {
				t.Errorf("the peer's networks are reached at %v, overlapping %s", c.Status.Remote.CIDR, local)
			}
		}
	}

	createConfiguration(t, ns, "later", []string{"192.168.78.0/24"}, []string{"192.168.79.0/24"})
	c = waitFor(t, configuration(ns, "later"), "Configuration", configured)
	if fmt.Sprint(c.Status.Remote.CIDR.Pod) != "[192.168.78.0/24]" {
		t.Fatalf("the peer's pods at %v, want 192.168.78.0/24 kept as it overlaps nothing yet", c.Status.Remote.CIDR.Pod)
	}
	addNode("nodenets-b", "192.168.78.5")
	c = waitFor(t, configuration(ns, "later"), "Configuration", func(c *netv1beta1.Configuration) bool {
		cond := condition(c.Status.Conditions, netv1beta1.NetworkCIDRsConfiguredCondition)
		return cond != nil && cond.Reason == netv1beta1.ConfigurationReasonOverlapsLocal && c.Labels[netv1beta1.ConfiguredLabel] == "false"
	})
	if cond := condition(c.Status.Conditions, netv1beta1.NetworkCIDRsConfiguredCondition); c.Status.Remote != nil ||
		!strings.Contains(cond.Message, "192.168.78.0/24") || !strings.Contains(cond.Message, "nodes") {
		t.Errorf("status.remote %+v, condition %+v; want nothing routed and the nodes' network named", c.Status.Remote, cond)
	}
}
