package imports

import (
	"crypto/sha256"
	"encoding/hex"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/mcs/merge"
)

// ManagedBy is the endpointslice.kubernetes.io/managed-by value of the
// import's EndpointSlices: not the EndpointSlice controller's, which would
// otherwise take them for its own and delete them.
const ManagedBy = "mcs-controller.liqo.io"

// servicePrefix starts the name of the import's Service: the name of the
// exported one is the user's in an exporting cluster, so ours differs.
const servicePrefix = "liqo-mcs-"

// ServiceName is the name of the ClusterSetIP Service of the import of
// Service name: a DNS label (at most 63 characters), a hash of name
// ending it when name is too long to fit whole.
func ServiceName(name string) string {
	return bounded(servicePrefix + name)
}

// SliceName is the name of the EndpointSlice of the import of Service
// name with the endpoints of cluster source.
func SliceName(name, source string) string {
	return bounded(servicePrefix + name + "-" + source)
}

// bounded is s if it is a DNS label's length, else its first characters
// and a hash of it.
func bounded(s string) string {
	const maxLen = 63
	if len(s) <= maxLen {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	h := hex.EncodeToString(sum[:])[:10]
	return s[:maxLen-len(h)-1] + "-" + h
}

// labels are the labels of every object of the import of Service name.
func labels(name string) map[string]string {
	return map[string]string{mcsv1beta1.LabelServiceName: name, consts.ManagedByLabel: consts.ManagedByValue}
}

// ServiceImport is the import of Service namespace/name merged as m,
// reached at ips (none for a Headless import).
func ServiceImport(namespace, name string, m merge.Result, ips []string) *mcsv1beta1.ServiceImport {
	si := &mcsv1beta1.ServiceImport{
		TypeMeta: metav1.TypeMeta{APIVersion: mcsv1beta1.GroupVersion.String(), Kind: "ServiceImport"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels(name),
			Annotations: m.Annotations},
		Spec: *m.Spec.DeepCopy(),
	}
	// The exported labels go along ours, which they cannot override.
	for k, v := range m.Labels {
		if _, ours := si.Labels[k]; !ours {
			si.Labels[k] = v
		}
	}
	si.Spec.IPs = ips
	for _, c := range m.Clusters {
		si.Status.Clusters = append(si.Status.Clusters, mcsv1beta1.ClusterStatus{Cluster: c})
	}
	return si
}

// Service is the selector-less ClusterSetIP Service of the import of
// Service namespace/name merged as m (a ClusterSetIP one): the cluster
// allocates its IP, and kube-proxy forwards it to the import's
// EndpointSlices, which name it.
func Service(namespace, name string, m merge.Result) *corev1.Service {
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: ServiceName(name), Namespace: namespace, Labels: labels(name)},
		Spec: corev1.ServiceSpec{
			Type:                  corev1.ServiceTypeClusterIP,
			SessionAffinity:       m.Spec.SessionAffinity,
			SessionAffinityConfig: m.Spec.SessionAffinityConfig.DeepCopy(),
			InternalTrafficPolicy: m.Spec.InternalTrafficPolicy,
			TrafficDistribution:   m.Spec.TrafficDistribution,
			IPFamilies:            m.Spec.IPFamilies,
		},
	}
	if len(m.Spec.IPFamilies) > 1 {
		svc.Spec.IPFamilyPolicy = new(corev1.IPFamilyPolicy)
		*svc.Spec.IPFamilyPolicy = corev1.IPFamilyPolicyPreferDualStack
	}
	for _, p := range m.Spec.Ports {
		// The endpoints' ports are the slices', by name: a selector-less
		// Service's target port is only a default.
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: p.Name, Protocol: p.Protocol, AppProtocol: p.AppProtocol,
			Port: p.Port, TargetPort: intstr.FromInt32(p.Port)})
	}
	return svc
}

// EndpointSlice is the EndpointSlice of the import of Service
// namespace/name with the endpoints of cluster source, already checked
// and at the addresses this cluster reaches them at. service names the
// import's Service ("" for a Headless import, which has none): kube-proxy
// forwards that Service to the slices that name it.
func EndpointSlice(namespace, name, service, source string, typ discoveryv1.AddressType, eps []discoveryv1.Endpoint, ports []discoveryv1.EndpointPort) *discoveryv1.EndpointSlice {
	l := labels(name)
	l[mcsv1beta1.LabelSourceCluster] = source
	l[discoveryv1.LabelManagedBy] = ManagedBy
	if service != "" {
		l[discoveryv1.LabelServiceName] = service
	}
	return &discoveryv1.EndpointSlice{
		TypeMeta:    metav1.TypeMeta{APIVersion: discoveryv1.SchemeGroupVersion.String(), Kind: "EndpointSlice"},
		ObjectMeta:  metav1.ObjectMeta{Name: SliceName(name, source), Namespace: namespace, Labels: l},
		AddressType: typ,
		Endpoints:   eps,
		Ports:       ports,
	}
}
