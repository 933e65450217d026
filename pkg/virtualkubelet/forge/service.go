package forge

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ForceRemoteNodePortAnnotation (value "true") on a local Service keeps its
// node ports on the remote copy, for users who need the same port in
// every cluster.
const ForceRemoteNodePortAnnotation = "liqo.io/force-remote-node-port"

// Service is the remote copy of a local Service: verbatim but for the
// fields each cluster assigns itself (see RemoteServiceSpec); nil for the
// API server's own Service, which every cluster has.
func Service(local *corev1.Service, remoteNamespace, localClusterID string) *corev1.Service {
	if local.Namespace == metav1.NamespaceDefault && local.Name == "kubernetes" {
		return nil
	}
	return &corev1.Service{
		ObjectMeta: RemoteMeta(&local.ObjectMeta, local.Name, remoteNamespace, localClusterID),
		Spec:       RemoteServiceSpec(&local.Spec, local.Annotations[ForceRemoteNodePortAnnotation] == "true"),
	}
}

// RemoteServiceSpec is a Service spec without what the remote cluster
// assigns from its own ranges (cluster IPs, IP families, load-balancer IP
// and, unless keepNodePorts, node ports): the remote API server fills them
// in, and keeps them across our updates. A headless Service stays headless.
func RemoteServiceSpec(local *corev1.ServiceSpec, keepNodePorts bool) corev1.ServiceSpec {
	s := *local.DeepCopy()
	if s.ClusterIP != corev1.ClusterIPNone {
		s.ClusterIP, s.ClusterIPs = "", nil
	}
	s.IPFamilies, s.IPFamilyPolicy = nil, nil
	s.LoadBalancerIP = ""
	if !keepNodePorts {
		s.HealthCheckNodePort = 0
		for i := range s.Ports {
			s.Ports[i].NodePort = 0
		}
	}
	return s
}

// ServiceContent is what must match between a Service's wanted and actual
// remote copy, besides labels and annotations: the spec without the
// remotely assigned fields.
func ServiceContent(s *corev1.Service) any {
	return RemoteServiceSpec(&s.Spec, s.Annotations[ForceRemoteNodePortAnnotation] == "true")
}

// Ingress is the remote copy of a local Ingress: verbatim but for the
// ingress class, left empty so that the remote default class serves it
// (the local class may not exist there).
func Ingress(local *networkingv1.Ingress, remoteNamespace, localClusterID string) *networkingv1.Ingress {
	spec := *local.Spec.DeepCopy()
	spec.IngressClassName = nil
	return &networkingv1.Ingress{
		ObjectMeta: RemoteMeta(&local.ObjectMeta, local.Name, remoteNamespace, localClusterID),
		Spec:       spec,
	}
}

// IngressContent is what must match between an Ingress's wanted and actual
// remote copy, besides labels and annotations: the spec but its class,
// which the remote admission may have defaulted.
func IngressContent(i *networkingv1.Ingress) any {
	spec := *i.Spec.DeepCopy()
	spec.IngressClassName = nil
	return spec
}
