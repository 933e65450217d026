package podpolicy

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// DefaultDedicatedTaints are the taint keys providers put on nodes kept
// for one kind of workload: GPU and accelerator nodes (tainted with their
// resource's name, as the device plugins' and cloud providers' guides
// say), the cloud providers' system node pools (CriticalAddonsOnly), and
// the conventional dedicated=<team> and AKS's sku=gpu. A consumer's pod
// tolerating one would land on those nodes, next to what they are kept
// for, without being granted what they hold.
var DefaultDedicatedTaints = []string{
	"CriticalAddonsOnly", "dedicated", "sku",
	"nvidia.com/gpu", "amd.com/gpu", "gpu.intel.com/i915", "gpu.intel.com/xe",
	"google.com/tpu", "aws.amazon.com/neuron", "habana.ai/gaudi",
}

// dedicatedTaints is DedicatedTaints or its default.
func (p *PodPolicy) dedicatedTaints() []string {
	if p.DedicatedTaints == nil {
		return DefaultDedicatedTaints
	}
	return p.DedicatedTaints
}

// vetDedicatedTolerations refuses a toleration of a dedicated taint
// unless the pod asks for the resource of the taint's name: a GPU node
// tainted nvidia.com/gpu takes the pods requesting nvidia.com/gpu (what
// Kubernetes' ExtendedResourceToleration admission adds for them), and the
// Quota admits those only if the consumer's ResourceSlice was granted
// GPUs. A taint no resource is named after (CriticalAddonsOnly) is never
// tolerated, unless the provider takes it off its list.
func (p *PodPolicy) vetDedicatedTolerations(spec *corev1.PodSpec, path *field.Path) []string {
	dedicated := p.dedicatedTaints()
	var bad []string
	for i, t := range spec.Tolerations {
		if t.Key == "" || !slices.Contains(dedicated, t.Key) || requestsResource(spec, corev1.ResourceName(t.Key)) {
			continue
		}
		bad = append(bad, fmt.Sprintf("%s must not tolerate %s, a taint of nodes this provider dedicates to some workloads, "+
			"unless the pod requests %s (within its Quota)", path.Child("tolerations").Index(i), t.Key, t.Key))
	}
	return bad
}

// requestsResource tells whether any container of spec, or the pod as a
// whole, requests or limits a positive amount of name.
func requestsResource(spec *corev1.PodSpec, name corev1.ResourceName) bool {
	asks := func(r corev1.ResourceRequirements) bool {
		req, lim := r.Requests[name], r.Limits[name]
		return req.Sign() > 0 || lim.Sign() > 0
	}
	if spec.Resources != nil && asks(*spec.Resources) {
		return true
	}
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range cs {
			if asks(cs[i].Resources) {
				return true
			}
		}
	}
	return false
}

// vetResourceClaims refuses dynamic resource allocation (DRA) unless the
// provider allows it: a claim takes devices its DRA drivers hand out,
// which no Quota counts, and names ResourceClaims or templates in the twin
// namespace, which only the provider's administrators can make there.
func (p *PodPolicy) vetResourceClaims(spec *corev1.PodSpec, path *field.Path) []string {
	if p.AllowResourceClaims {
		return nil
	}
	const why = "devices allocated by the provider's drivers, outside the consumer's Quota"
	var bad []string
	if len(spec.ResourceClaims) > 0 {
		bad = append(bad, fmt.Sprintf("%s must be empty: %s", path.Child("resourceClaims"), why))
	}
	if spec.Resources != nil && len(spec.Resources.Claims) > 0 {
		bad = append(bad, fmt.Sprintf("%s must be empty: %s", path.Child("resources", "claims"), why))
	}
	for _, c := range []struct {
		name string
		list []corev1.Container
	}{{"initContainers", spec.InitContainers}, {"containers", spec.Containers}} {
		for i := range c.list {
			if len(c.list[i].Resources.Claims) > 0 {
				bad = append(bad, fmt.Sprintf("%s must be empty: %s", path.Child(c.name).Index(i).Child("resources", "claims"), why))
			}
		}
	}
	return bad
}
