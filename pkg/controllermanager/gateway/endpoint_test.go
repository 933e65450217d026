package gateway

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
)

func TestServerEndpoint(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{
		{Type: corev1.NodeHostName, Address: "n"}, {Type: corev1.NodeInternalIP, Address: "172.31.1.10"}}}}
	withExternal := node.DeepCopy()
	withExternal.Status.Addresses = append(withExternal.Status.Addresses, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "203.0.113.7"})
	svc := func(typ corev1.ServiceType, nodePort int32, ingress ...corev1.LoadBalancerIngress) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "gw"}, Spec: corev1.ServiceSpec{Type: typ, ClusterIP: "10.96.0.20",
			Ports: []corev1.ServicePort{{Port: 51840, NodePort: nodePort}}},
			Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: ingress}}}
	}
	for _, c := range []struct {
		name    string
		svc     *corev1.Service
		node    *corev1.Node
		addr    string
		port    int32
		wantErr bool
	}{
		{"node port on the pod's node", svc(corev1.ServiceTypeNodePort, 30001), node, "172.31.1.10", 30001, false},
		{"external address first", svc(corev1.ServiceTypeNodePort, 30001), withExternal, "203.0.113.7", 30001, false},
		{"node port not allocated", svc(corev1.ServiceTypeNodePort, 0), node, "", 0, true},
		{"no node yet", svc(corev1.ServiceTypeNodePort, 30001), nil, "", 0, true},
		{"load balancer", svc(corev1.ServiceTypeLoadBalancer, 30001, corev1.LoadBalancerIngress{IP: "198.51.100.1"}), nil, "198.51.100.1", 51840, false},
		{"load balancer by name", svc(corev1.ServiceTypeLoadBalancer, 30001, corev1.LoadBalancerIngress{Hostname: "gw.example"}), nil, "gw.example", 51840, false},
		{"load balancer pending", svc(corev1.ServiceTypeLoadBalancer, 30001), nil, "", 0, true},
		{"cluster IP", svc(corev1.ServiceTypeClusterIP, 0), nil, "10.96.0.20", 51840, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ep, err := serverEndpoint(c.svc, c.node)
			if c.wantErr {
				if err == nil {
					t.Fatalf("no error, endpoint %+v", ep)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(ep.Addresses) != 1 || string(ep.Addresses[0]) != c.addr || ep.Port != c.port || *ep.Protocol != corev1.ProtocolUDP {
				t.Fatalf("endpoint %+v, want %s:%d/UDP", ep, c.addr, c.port)
			}
		})
	}
}

func TestActivePod(t *testing.T) {
	now := metav1.Now()
	ours := map[string]string{GatewayUIDAnnotation: "uid-2"}
	active := map[string]string{netv1beta1.GatewayActiveLabel: "true"}
	running := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "new", Annotations: ours, Labels: active}, Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.244.1.9"}}
	// A replica standing by: running, not holding the Lease.
	standby := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "standby", Annotations: ours}, Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.244.1.10"}}
	leaving := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "old", DeletionTimestamp: &now, Annotations: ours}, Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.244.1.8"}}
	pending := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pending", Annotations: ours}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
	// The pod of an earlier gateway of the same name, with the old keys.
	earlier := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "earlier", Annotations: map[string]string{GatewayUIDAnnotation: "uid-1"}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.244.1.7"}}
	if p := activePod([]corev1.Pod{earlier, leaving, pending, standby, running}, "uid-2"); p == nil || p.Name != "new" {
		t.Fatalf("active pod %v, want new", p)
	}
	if p := activePod([]corev1.Pod{earlier, leaving, pending, standby}, "uid-2"); p != nil {
		t.Fatalf("active pod %s among an earlier gateway's, a leaving, a pending and a standing-by one", p.Name)
	}
}
