package realnodes

import (
	"net"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/realpods"
)

var podCIDR = netip.MustParsePrefix("10.244.0.0/16")

// TestOverlappingClusters runs three busybox web servers in each cluster:
// their pod IPs come from the same 10.244.0.0/16 in both, a client pod of
// each cluster reaches every pod and the Service by its DNS name, and a pod
// of west reaches east's NodePort at east's node address.
func TestOverlappingClusters(t *testing.T) {
	ctx := realpods.Timeout(t, 4*time.Minute)
	const nodePort = 30080
	type side struct {
		c    *testbed.Cluster
		ns   string
		pods []corev1.Pod
	}
	sides := []*side{{c: east}, {c: west}}
	for _, s := range sides {
		s.ns = realpods.Namespace(ctx, t, s.c, "overlap")
		np := int32(0)
		if s.c == east {
			np = nodePort
		}
		realpods.DeployWeb(ctx, t, s.c, s.ns, 3, np)
	}
	cidrs := map[string][]string{}
	for _, s := range sides {
		s.pods = realpods.RunningPods(ctx, t, s.c, s.ns, "app=web", 3)
		for _, p := range s.pods {
			addr, err := netip.ParseAddr(p.Status.PodIP)
			if err != nil || !podCIDR.Contains(addr) {
				t.Errorf("%s: pod %s has IP %q, not in %s", s.c.Name, p.Name, p.Status.PodIP, podCIDR)
			}
			node, err := s.c.Client().CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cidrs[node.Spec.PodCIDR] = append(cidrs[node.Spec.PodCIDR], s.c.Name)
			t.Logf("%s: pod %s on %s (pod CIDR %s) has IP %s", s.c.Name, p.Name, p.Spec.NodeName, node.Spec.PodCIDR, p.Status.PodIP)
		}
	}
	overlap := false
	for _, clusters := range cidrs {
		overlap = overlap || (slices.Contains(clusters, east.Name) && slices.Contains(clusters, west.Name))
	}
	if !overlap {
		t.Errorf("no node pod CIDR holds web pods of both clusters: %v", cidrs)
	}

	for _, s := range sides {
		cl := realpods.Client(ctx, t, s.c, s.ns, "")
		var names []string
		for _, p := range s.pods {
			names = append(names, p.Name)
			if got := realpods.Fetch(ctx, t, s.c, s.ns, cl, "http://"+p.Status.PodIP+":8080/"); got != p.Name {
				t.Errorf("%s: pod IP %s answered %q, want %q", s.c.Name, p.Status.PodIP, got, p.Name)
			}
		}
		url := "http://web." + s.ns + ".svc.cluster.local/"
		if got := realpods.Fetch(ctx, t, s.c, s.ns, cl, url); !slices.Contains(names, got) {
			t.Errorf("%s: %s answered %q, want one of %v", s.c.Name, url, got, names)
		}
	}

	// West's client reaches east's NodePort at east's node address, across
	// the underlay, as it would reach another real cluster's node.
	nodes, err := east.Client().CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: testbed.NodeTypeLabel + "=" + testbed.RealNodeType})
	if err != nil {
		t.Fatal(err)
	}
	var eastNames []string
	for _, p := range sides[0].pods {
		eastNames = append(eastNames, p.Name)
	}
	for _, n := range nodes.Items {
		ip := internalIP(&n)
		url := "http://" + ip + ":30080/"
		if got := realpods.Fetch(ctx, t, west, sides[1].ns, "client", url); !slices.Contains(eastNames, got) {
			t.Errorf("east's NodePort at %s (node %s) answered west's pod with %q, want one of %v", ip, n.Name, got, eastNames)
		}
	}
}

func internalIP(n *corev1.Node) string {
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}

// TestAcrossNodes checks pod-to-pod and pod-to-Service traffic between the
// two real nodes of east: the client runs on one, the server on the other.
func TestAcrossNodes(t *testing.T) {
	ctx := realpods.Timeout(t, 3*time.Minute)
	ns := realpods.Namespace(ctx, t, east, "across")
	realpods.DeployWeb(ctx, t, east, ns, 2, 0)
	pods := realpods.RunningPods(ctx, t, east, ns, "app=web", 2)
	if pods[0].Spec.NodeName == pods[1].Spec.NodeName {
		t.Fatalf("both web pods run on %s; the spread constraint should have split them", pods[0].Spec.NodeName)
	}
	server := pods[1]
	cl := realpods.Client(ctx, t, east, ns, pods[0].Spec.NodeName)

	if got := realpods.Fetch(ctx, t, east, ns, cl, "http://"+server.Status.PodIP+":8080/"); got != server.Name {
		t.Errorf("pod %s on %s answered %q", server.Name, server.Spec.NodeName, got)
	}
	// A Service whose only endpoint is the pod on the other node.
	patch := []byte(`{"metadata":{"labels":{"pick":"me"}}}`)
	if _, err := east.Client().CoreV1().Pods(ns).Patch(ctx, server.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "picked", Namespace: ns},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"pick": "me"},
			Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	created, err := east.Client().CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, url := range []string{"http://" + created.Spec.ClusterIP + "/", "http://picked." + ns + ".svc.cluster.local/"} {
		if got := realpods.Fetch(ctx, t, east, ns, cl, url); got != server.Name {
			t.Errorf("%s from %s answered %q, want %q on %s", url, pods[0].Spec.NodeName, got, server.Name, server.Spec.NodeName)
		}
	}
}

// TestRealAndSimulatedPods runs a pod on a simulated node and one on a real
// node of the same cluster.
func TestRealAndSimulatedPods(t *testing.T) {
	ctx := realpods.Timeout(t, 2*time.Minute)
	ns := realpods.Namespace(ctx, t, east, "mixed")
	for _, kind := range []string{"kwok", testbed.RealNodeType} {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: kind, Namespace: ns, Labels: map[string]string{"kind": kind}},
			Spec: corev1.PodSpec{
				NodeSelector: map[string]string{testbed.NodeTypeLabel: kind},
				Containers:   []corev1.Container{{Name: "main", Image: "busybox", Command: []string{"sleep", "3600"}}},
			},
		}
		if _, err := east.Client().CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, kind := range []string{"kwok", testbed.RealNodeType} {
		p := realpods.RunningPods(ctx, t, east, ns, "kind="+kind, 1)[0]
		node, err := east.Client().CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := node.Labels[testbed.NodeTypeLabel]; got != kind {
			t.Errorf("pod %s runs on %s of kind %q, want %q", p.Name, node.Name, got, kind)
		}
	}
}

// TestAPIServersFromPods: a pod reaches its own API server through the
// `kubernetes` Service (in-cluster config), and the other cluster's API
// server at that cluster's underlay address, as a component peering real
// clusters would.
func TestAPIServersFromPods(t *testing.T) {
	ctx := realpods.Timeout(t, 2*time.Minute)
	ns := realpods.Namespace(ctx, t, west, "apiserver")
	cl := realpods.Client(ctx, t, west, ns, "")
	_, port, err := net.SplitHostPort(strings.TrimPrefix(east.Server, "https://"))
	if err != nil {
		t.Fatal(err)
	}
	for _, url := range []string{
		"https://kubernetes.default.svc.cluster.local/version",
		"https://" + net.JoinHostPort(east.UnderlayAddress().String(), port) + "/version",
	} {
		// /version is public (system:public-info-viewer); busybox's wget
		// does not check certificates.
		if got := realpods.Fetch(ctx, t, west, ns, cl, url); !strings.Contains(got, `"gitVersion": "v1.34`) {
			t.Errorf("%s answered %q, want the API server's version", url, got)
		}
	}
}
