package merge

import (
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

// Export is one cluster's export of a Service: what of it the clusterset
// merges.
type Export struct {
	// Cluster is the exporting cluster's ID.
	Cluster string
	// Created is when its ServiceExport was created: the oldest export wins
	// a conflict (the cluster ID breaks a tie).
	Created time.Time
	Type    mcsv1beta1.ServiceImportType
	Ports   []mcsv1beta1.ServicePort

	SessionAffinity       corev1.ServiceAffinity
	SessionAffinityConfig *corev1.SessionAffinityConfig
	InternalTrafficPolicy *corev1.ServiceInternalTrafficPolicy
	TrafficDistribution   *string
	IPFamilies            []corev1.IPFamily

	// Labels and Annotations are the ServiceExport's exportedLabels and
	// exportedAnnotations, which the ServiceImport carries; never the
	// Service's own.
	Labels, Annotations map[string]string
}

// FromService is the export of svc, exported by se in cluster. svc is
// exportable (see Exportable).
func FromService(cluster string, se *mcsv1beta1.ServiceExport, svc *corev1.Service) Export {
	e := Export{
		Cluster: cluster, Created: se.CreationTimestamp.Time,
		Type:                  mcsv1beta1.ClusterSetIP,
		SessionAffinity:       svc.Spec.SessionAffinity,
		SessionAffinityConfig: svc.Spec.SessionAffinityConfig.DeepCopy(),
		InternalTrafficPolicy: svc.Spec.InternalTrafficPolicy,
		TrafficDistribution:   svc.Spec.TrafficDistribution,
		IPFamilies:            append([]corev1.IPFamily(nil), svc.Spec.IPFamilies...),
		Labels:                maps.Clone(se.Spec.ExportedLabels),
		Annotations:           maps.Clone(se.Spec.ExportedAnnotations),
	}
	if svc.Spec.ClusterIP == corev1.ClusterIPNone {
		e.Type = mcsv1beta1.Headless
	}
	if e.SessionAffinity == "" {
		e.SessionAffinity = corev1.ServiceAffinityNone
	}
	for _, p := range svc.Spec.Ports {
		proto := p.Protocol
		if proto == "" {
			proto = corev1.ProtocolTCP
		}
		e.Ports = append(e.Ports, mcsv1beta1.ServicePort{Name: p.Name, Protocol: proto, AppProtocol: p.AppProtocol, Port: p.Port})
	}
	return e
}

// Exportable tells why svc cannot be exported, or "" when it can: the KEP
// leaves ExternalName Services out, a name in another cluster's DNS that
// the clusterset cannot merge.
func Exportable(svc *corev1.Service) string {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return "an ExternalName Service cannot be exported: it has no endpoints for the clusterset to merge"
	}
	return ""
}
