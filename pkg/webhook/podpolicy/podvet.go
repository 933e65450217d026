package podpolicy

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/liqo-go/liqo/pkg/podsecurity"
)

// shadowPodSpecPath is where the pod spec sits in a ShadowPod, as
// refusals name its fields.
var shadowPodSpecPath = field.NewPath("spec", "pod")

// Vet lists what a consumer may not ask of the provider in the pod of a
// ShadowPod in namespace (its twin namespace), with the metadata the real
// pod gets (labels and annotations); classes tells which priority and runtime classes
// the provider has. A consumer is not trusted with anything beyond its
// own pods, so every rule is about what the pod would reach of the
// provider's:
//
//   - its nodes' kernel and host: the Pod Security Standards at p.Level
//     (podsecurity.Check), as the twin namespaces' Pod Security Admission
//     labels also enforce on the real pod;
//   - its choice of nodes: no node name, node selector or node affinity,
//     no pod affinity reaching other namespaces, no other scheduler, and
//     no toleration of the taints that keep nodes for the provider
//     (vetScheduling), nor of the taints of nodes it dedicates to some
//     workloads unless the pod asks for what they hold
//     (vetDedicatedTolerations);
//   - its devices: no dynamic resource allocation, which no Quota
//     counts, unless the provider allows it (vetResourceClaims);
//   - its priorities and runtimes: no system priority class, and only
//     the runtime classes the provider offers (vetPriority, vetRuntime);
//   - its credentials: no ServiceAccount but the default one, and none of
//     the provider's tokens (vetIdentity);
//   - its storage and networks: only volumes whose content is the pod's
//     own, and claims asking no more than the consumer's PVCs may
//     (vetVolumes);
//   - what other systems on the provider act upon: only annotations and
//     labels known to be inert there, or kept off the real pod
//     (vetAnnotations, vetLabels).
//
// Each refusal ends with the rule that makes it, by the chart value (and
// controller manager flag) that sets it: the consumer sees the message on
// its local pod, and it is what the provider's administrator would change.
// Administrators are trusted and not vetted; the API server's Pod Security
// Admission still applies to the real pod. The error is the classes' only.
func (p *PodPolicy) Vet(ctx context.Context, namespace string, labels, annotations map[string]string, spec *corev1.PodSpec, classes Classes) ([]string, error) {
	path := shadowPodSpecPath
	priority, err := p.vetPriority(ctx, spec, path, classes)
	if err != nil {
		return nil, err
	}
	runtime, err := p.vetRuntime(ctx, spec, path, classes)
	if err != nil {
		return nil, err
	}
	volumes, claims := p.vetVolumes(spec, path)
	var bad []string
	for _, r := range []struct {
		refusals []string
		rule     string
	}{
		{podsecurity.Check(p.Level, annotations, spec, path), levelRule},
		{p.vetScheduling(namespace, spec, path), schedulingRule},
		{p.vetDedicatedTolerations(spec, path), dedicatedRule},
		{p.vetResourceClaims(spec, path), draRule},
		{priority, priorityRule},
		{runtime, runtimeRule},
		{vetIdentity(spec, path), identityRule},
		{volumes, volumeRule},
		{claims, claimRule},
		{p.vetAnnotations(annotations), annotationRule},
		{p.vetLabels(labels), labelRule},
	} {
		if len(r.refusals) > 0 {
			bad = append(bad, strings.Join(r.refusals, "; ")+" [rule: "+r.rule+"]")
		}
	}
	return bad, nil
}
