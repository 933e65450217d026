package gateway

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
)

// activePod is the gateway pod that carries the traffic: the running one
// of this gateway object (uid; a pod of an earlier gateway of the same name
// may linger while the garbage collector removes it) that holds the
// gateway's Lease (labelled active), not being deleted, nil if none is.
func activePod(pods []corev1.Pod, uid string) *corev1.Pod {
	for i := range pods {
		p := &pods[i]
		if p.Annotations[GatewayUIDAnnotation] == uid && p.Labels[netv1beta1.GatewayActiveLabel] == "true" &&
			p.DeletionTimestamp.IsZero() && p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" {
			return p
		}
	}
	return nil
}

// nodeAddress is the address another cluster dials to reach node: an
// external one when the node has one, else its internal one.
func nodeAddress(node *corev1.Node) (string, error) {
	for _, t := range []corev1.NodeAddressType{corev1.NodeExternalIP, corev1.NodeExternalDNS, corev1.NodeInternalIP, corev1.NodeInternalDNS, corev1.NodeHostName} {
		for _, a := range node.Status.Addresses {
			if a.Type == t && a.Address != "" {
				return a.Address, nil
			}
		}
	}
	return "", fmt.Errorf("node %s has no address", node.Name)
}

// serverEndpoint is where the other cluster dials the server: for a
// NodePort Service, the node port on the node of the active gateway pod
// (any node would do with kube-proxy, but that node saves a hop and needs
// no SNAT that would hide the client's address); for a LoadBalancer, its
// ingress addresses; for a ClusterIP, the cluster IP (useful only to a
// peer that routes to it).
func serverEndpoint(svc *corev1.Service, node *corev1.Node) (*netv1beta1.EndpointStatus, error) {
	if len(svc.Spec.Ports) == 0 {
		return nil, fmt.Errorf("service %s has no port", svc.Name)
	}
	udp := corev1.ProtocolUDP
	p := svc.Spec.Ports[0]
	ep := &netv1beta1.EndpointStatus{Port: p.Port, Protocol: &udp}
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		if p.NodePort == 0 {
			return nil, fmt.Errorf("service %s has no node port yet", svc.Name)
		}
		if node == nil {
			return nil, fmt.Errorf("the gateway pod is not running on a node yet")
		}
		addr, err := nodeAddress(node)
		if err != nil {
			return nil, err
		}
		ep.Addresses, ep.Port = []netv1beta1.Address{netv1beta1.Address(addr)}, p.NodePort
	case corev1.ServiceTypeLoadBalancer:
		for _, in := range svc.Status.LoadBalancer.Ingress {
			switch {
			case in.IP != "":
				ep.Addresses = append(ep.Addresses, netv1beta1.Address(in.IP))
			case in.Hostname != "":
				ep.Addresses = append(ep.Addresses, netv1beta1.Address(in.Hostname))
			}
		}
		if len(ep.Addresses) == 0 {
			return nil, fmt.Errorf("service %s has no load balancer address yet", svc.Name)
		}
	default:
		if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
			return nil, fmt.Errorf("service %s has no cluster IP", svc.Name)
		}
		ep.Addresses = []netv1beta1.Address{netv1beta1.Address(svc.Spec.ClusterIP)}
	}
	return ep, nil
}
