package record

import (
	"cmp"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/mcs/merge"
)

// maxEndpoints is what an EndpointSlice, and so a record, holds at most.
const maxEndpoints = 1000

// Forge is the record, in namespace, of cluster's valid export se of svc
// whose EndpointSlices are eps. It carries the ready endpoints of the
// Service's primary IP family only (an import has one EndpointSlice per
// source cluster, of one address type), at most 1,000 of them, sorted so
// that the same endpoints make the same record.
func Forge(cluster, namespace string, se *mcsv1beta1.ServiceExport, svc *corev1.Service, eps []discoveryv1.EndpointSlice) *offv1beta1.ExportRecord {
	e := merge.FromService(cluster, se, svc)
	r := &offv1beta1.ExportRecord{
		TypeMeta: metav1.TypeMeta{APIVersion: offv1beta1.GroupVersion.String(), Kind: "ExportRecord"},
		ObjectMeta: metav1.ObjectMeta{Name: Name(cluster, svc.Namespace, svc.Name), Namespace: namespace, Labels: map[string]string{
			mcsv1beta1.LabelSourceCluster: cluster, mcsv1beta1.LabelServiceName: svc.Name,
			consts.ManagedByLabel: consts.ManagedByValue,
		}},
		Spec: offv1beta1.ExportRecordSpec{
			Namespace: svc.Namespace, Service: svc.Name, Created: metav1.NewTime(e.Created), Type: e.Type, Ports: e.Ports,
			SessionAffinity: e.SessionAffinity, SessionAffinityConfig: e.SessionAffinityConfig,
			InternalTrafficPolicy: e.InternalTrafficPolicy, TrafficDistribution: e.TrafficDistribution, IPFamilies: e.IPFamilies,
			ExportedLabels: e.Labels, ExportedAnnotations: e.Annotations,
		},
	}
	r.Spec.Endpoints = readyEndpoints(addressType(svc), eps)
	return r
}

// addressType is the address type of svc's primary IP family.
func addressType(svc *corev1.Service) discoveryv1.AddressType {
	if len(svc.Spec.IPFamilies) > 0 && svc.Spec.IPFamilies[0] == corev1.IPv6Protocol {
		return discoveryv1.AddressTypeIPv6
	}
	return discoveryv1.AddressTypeIPv4
}

// readyEndpoints gathers the ready endpoints of the slices of type typ,
// each once (an endpoint moving between slices may be in two for a
// while), with the ports of the first slice that has endpoints.
func readyEndpoints(typ discoveryv1.AddressType, eps []discoveryv1.EndpointSlice) offv1beta1.EndpointSliceTemplate {
	t := offv1beta1.EndpointSliceTemplate{AddressType: typ}
	seen := map[string]bool{}
	for _, s := range eps {
		if s.AddressType != typ {
			continue
		}
		for _, ep := range s.Endpoints {
			// Unset Ready means ready, as the API says.
			if !ptr.Deref(ep.Conditions.Ready, true) || len(ep.Addresses) == 0 || seen[ep.Addresses[0]] {
				continue
			}
			seen[ep.Addresses[0]] = true
			if t.Ports == nil {
				t.Ports = slices.Clone(s.Ports)
			}
			// What an importer has use for: the address, and the names
			// and places DNS and topology-aware routing read. The
			// exporting cluster's node names mean nothing elsewhere.
			t.Endpoints = append(t.Endpoints, discoveryv1.Endpoint{
				Addresses: slices.Clone(ep.Addresses), Hostname: ep.Hostname, Zone: ep.Zone,
				Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			})
		}
	}
	slices.SortFunc(t.Endpoints, func(a, b discoveryv1.Endpoint) int { return cmp.Compare(a.Addresses[0], b.Addresses[0]) })
	if len(t.Endpoints) > maxEndpoints {
		t.Endpoints = t.Endpoints[:maxEndpoints]
	}
	return t
}

// Export is the export r stands for, by the cluster its source-cluster
// label names: whether that is the cluster that wrote it is for the
// receiver to check (trust.Record).
func Export(r *offv1beta1.ExportRecord) merge.Export {
	s := r.Spec
	return merge.Export{
		Cluster: r.Labels[mcsv1beta1.LabelSourceCluster], Created: s.Created.Time, Type: s.Type, Ports: slices.Clone(s.Ports),
		SessionAffinity: s.SessionAffinity, SessionAffinityConfig: s.SessionAffinityConfig.DeepCopy(),
		InternalTrafficPolicy: s.InternalTrafficPolicy, TrafficDistribution: s.TrafficDistribution,
		IPFamilies: slices.Clone(s.IPFamilies), Labels: maps.Clone(s.ExportedLabels), Annotations: maps.Clone(s.ExportedAnnotations),
	}
}
