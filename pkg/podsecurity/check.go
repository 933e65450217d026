package podsecurity

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Check lists what in a pod breaks level: the baseline controls always,
// the restricted ones too at Restricted. annotations are the pod's (some
// older controls are annotations); specPath is where spec sits in the
// object checked, for the messages (spec.pod in a ShadowPod). Nothing
// means the pod meets the level.
func Check(level Level, annotations map[string]string, spec *corev1.PodSpec, specPath *field.Path) []string {
	bad := baseline(annotations, spec, specPath)
	if level.OrDefault() == Restricted {
		bad = append(bad, restricted(spec, specPath)...)
	}
	return bad
}
