package trust

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/liqo-go/liqo/pkg/mcs/merge"
)

// Export checks the export e that cluster sender published: it must be the
// sender's own, and every property merge.Merge takes from it must be one a
// Service could have, so that a hostile peer cannot shape the imports of
// the other clusters into something no Service is. All the faults are
// returned together.
func Export(sender string, e merge.Export) error {
	var errs []error
	if e.Cluster != sender {
		errs = append(errs, fmt.Errorf("cluster %s published an export claiming cluster %q: a cluster publishes only its own", sender, e.Cluster))
	}
	if e.Type != mcsv1beta1.ClusterSetIP && e.Type != mcsv1beta1.Headless {
		errs = append(errs, fmt.Errorf("type %q is neither ClusterSetIP nor Headless", e.Type))
	}
	errs = append(errs, ports(e.Ports)...)
	if e.SessionAffinity != corev1.ServiceAffinityNone && e.SessionAffinity != corev1.ServiceAffinityClientIP {
		errs = append(errs, fmt.Errorf("session affinity %q is neither None nor ClientIP", e.SessionAffinity))
	}
	if p := e.InternalTrafficPolicy; p != nil && *p != corev1.ServiceInternalTrafficPolicyCluster && *p != corev1.ServiceInternalTrafficPolicyLocal {
		errs = append(errs, fmt.Errorf("internal traffic policy %q is neither Cluster nor Local", *p))
	}
	if len(e.IPFamilies) > 2 {
		errs = append(errs, fmt.Errorf("%d IP families, at most 2", len(e.IPFamilies)))
	}
	for _, f := range e.IPFamilies {
		if f != corev1.IPv4Protocol && f != corev1.IPv6Protocol {
			errs = append(errs, fmt.Errorf("IP family %q is neither IPv4 nor IPv6", f))
		}
	}
	for k, v := range e.Labels {
		for _, msg := range append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...) {
			errs = append(errs, fmt.Errorf("exported label %q=%q: %s", k, v, msg))
		}
	}
	for k := range e.Annotations {
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, fmt.Errorf("exported annotation %q: %s", k, msg))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("refusing the export of cluster %s: %w", sender, err)
	}
	return nil
}

// ports checks ports as the API server checks a Service's.
func ports(ps []mcsv1beta1.ServicePort) []error {
	var errs []error
	names := map[string]bool{}
	for _, p := range ps {
		if p.Port < 1 || p.Port > 65535 {
			errs = append(errs, fmt.Errorf("port %d is not in 1-65535", p.Port))
		}
		switch p.Protocol {
		case corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP:
		default:
			errs = append(errs, fmt.Errorf("port %d: protocol %q is not TCP, UDP or SCTP", p.Port, p.Protocol))
		}
		if p.Name == "" && len(ps) > 1 {
			errs = append(errs, fmt.Errorf("port %d has no name, which a Service of several ports requires", p.Port))
		}
		if p.Name != "" {
			for _, msg := range validation.IsDNS1123Label(p.Name) {
				errs = append(errs, fmt.Errorf("port name %q: %s", p.Name, msg))
			}
		}
		if names[p.Name] {
			errs = append(errs, fmt.Errorf("port name %q used twice", p.Name))
		}
		names[p.Name] = true
	}
	return errs
}
