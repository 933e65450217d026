package forge

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
)

// ShadowEndpointSlice is the ShadowEndpointSlice that asks the provider to
// keep, in remoteNamespace, an EndpointSlice listing the endpoints of local
// that the provider's own control plane does not know; nil when there is
// nothing to reflect (and any remote copy must go):
//   - the API server's own `kubernetes` Service, which every cluster has
//     (its Service is not reflected either, see Service);
//   - a slice of no Service (no kubernetes.io/service-name label): nothing
//     on the provider would select it;
//   - a slice left with no endpoint once those on providerNodes are
//     dropped.
//
// providerNodes are the provider's virtual nodes (a provider may have
// several): the pods there are the provider's own, which its EndpointSlice
// controller already lists, and listing them twice would double their
// share of the Service's traffic. Each cluster's EndpointSlices must list
// every replica exactly once, and the copy is the same whichever of the
// provider's nodes forges it.
//
// Addresses go as they are: the provider translates them with its own
// mapping of this cluster's networks (the network fabric's), and checks
// them there.
//
// What only means something locally is dropped: each endpoint's node name,
// zone, target reference and topology hints (they name local nodes and
// pods, and kube-proxy on the provider would act on node names it has),
// the endpointslice.kubernetes.io/managed-by label (the provider's
// controller sets its own on the slice it makes) and the last change
// trigger time annotation (a local latency measure, and it would make
// every local change a remote write).
func ShadowEndpointSlice(local *discoveryv1.EndpointSlice, remoteNamespace, localClusterID string, providerNodes []string) *offv1beta1.ShadowEndpointSlice {
	service := local.Labels[discoveryv1.LabelServiceName]
	if service == "" || local.Namespace == metav1.NamespaceDefault && service == "kubernetes" {
		return nil
	}
	var endpoints []discoveryv1.Endpoint
	for i := range local.Endpoints {
		e := &local.Endpoints[i]
		if e.NodeName != nil && slices.Contains(providerNodes, *e.NodeName) {
			continue
		}
		endpoints = append(endpoints, discoveryv1.Endpoint{
			Addresses:  slices.Clone(e.Addresses),
			Conditions: *e.Conditions.DeepCopy(),
			Hostname:   copyPtr(e.Hostname),
		})
	}
	if len(endpoints) == 0 {
		return nil
	}
	var ports []discoveryv1.EndpointPort
	for i := range local.Ports {
		ports = append(ports, *local.Ports[i].DeepCopy())
	}

	meta := RemoteMeta(&local.ObjectMeta, local.Name, remoteNamespace, localClusterID)
	delete(meta.Labels, discoveryv1.LabelManagedBy)
	if meta.Annotations != nil {
		delete(meta.Annotations, corev1.EndpointsLastChangeTriggerTime)
		if len(meta.Annotations) == 0 {
			meta.Annotations = nil
		}
	}
	return &offv1beta1.ShadowEndpointSlice{
		ObjectMeta: meta,
		Spec: offv1beta1.ShadowEndpointSliceSpec{Template: offv1beta1.EndpointSliceTemplate{
			AddressType: local.AddressType, Endpoints: endpoints, Ports: ports,
		}},
	}
}

// ShadowEndpointSliceContent is what must match between a
// ShadowEndpointSlice's wanted and actual remote copy, besides labels and
// annotations: the template, which is all the provider reads.
func ShadowEndpointSliceContent(s *offv1beta1.ShadowEndpointSlice) any {
	return s.Spec.Template
}

func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
