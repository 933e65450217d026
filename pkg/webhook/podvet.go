package webhook

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/liqo-go/liqo/pkg/podsecurity"
)

// shadowPodSpecPath is where the pod spec sits in a ShadowPod, as
// refusals name its fields.
var shadowPodSpecPath = field.NewPath("spec", "pod")

// vet lists what a consumer may not ask of the provider in the pod of a
// ShadowPod in namespace (its twin namespace), with the metadata the real
// pod gets (annotations). A consumer is not trusted with anything beyond
// its own pods, so every rule is about what the pod would reach of the
// provider's:
//
//   - its nodes' kernel and host: the Pod Security Standards at p.Level
//     (podsecurity.Check), as the twin namespaces' Pod Security Admission
//     labels also enforce on the real pod;
//   - its choice of nodes: no node name, node selector or node affinity,
//     no pod affinity reaching other namespaces, no other scheduler, and
//     no toleration of the taints that keep nodes for the provider
//     (vetScheduling);
//   - its priorities and runtimes: only allowed priority and runtime
//     classes (vetClasses);
//   - its credentials: no ServiceAccount but the default one, and none of
//     the provider's tokens (vetIdentity);
//   - its storage and networks: only volumes whose content is the pod's
//     own (vetVolumes);
//   - what other systems on the provider act upon: only annotations known
//     to be inert there (vetAnnotations).
//
// Administrators are trusted and not vetted; the API server's Pod Security
// Admission still applies to the real pod.
func (p *PodPolicy) vet(namespace string, annotations map[string]string, spec *corev1.PodSpec) []string {
	bad := podsecurity.Check(p.Level, annotations, spec, shadowPodSpecPath)
	bad = append(bad, p.vetScheduling(namespace, spec, shadowPodSpecPath)...)
	bad = append(bad, p.vetClasses(spec, shadowPodSpecPath)...)
	bad = append(bad, vetIdentity(spec, shadowPodSpecPath)...)
	bad = append(bad, p.vetVolumes(spec, shadowPodSpecPath)...)
	bad = append(bad, p.vetAnnotations(annotations)...)
	return bad
}
