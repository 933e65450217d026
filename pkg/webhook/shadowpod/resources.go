package shadowpod

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/liqo-go/liqo/pkg/webhook/quota"
)

// A ShadowPod's resources are what its quota is checked against, so the
// provider checks them itself: a negative quantity would cancel another
// container's in the sum the quota bounds, and the CRD's CEL rules refuse
// one only where the API server's cost budget lets them look (every
// pod-level and overhead quantity, the containers' cpu and memory; see the
// ShadowPodSpec type), never a container's other resources.

// resourceSet is one named set of requests and limits of a pod spec: a
// container's, an init container's, or the pod's own.
type resourceSet struct {
	// where names it in messages: `container "app"`, `spec.pod.resources`.
	where            string
	requests, limits corev1.ResourceList
}

// resourceSets lists the resources of spec that its usage is made of, in
// the order of the spec. Ephemeral containers may not have resources, and
// the API server refuses the pod if they do.
func resourceSets(spec *corev1.PodSpec) []resourceSet {
	var out []resourceSet
	for _, c := range spec.InitContainers {
		out = append(out, resourceSet{fmt.Sprintf("init container %q", c.Name), c.Resources.Requests, c.Resources.Limits})
	}
	for _, c := range spec.Containers {
		out = append(out, resourceSet{fmt.Sprintf("container %q", c.Name), c.Resources.Requests, c.Resources.Limits})
	}
	if r := spec.Resources; r != nil {
		out = append(out, resourceSet{"spec.pod.resources", r.Requests, r.Limits})
	}
	return out
}

// vetResources lists the quantities of spec no pod may ask for: negative
// ones, and fractions of extended resources, which Kubernetes hands out
// whole (the API server would refuse the real pod anyway, after the quota
// had counted it).
func vetResources(spec *corev1.PodSpec) []string {
	var bad []string
	vet := func(where, kind string, l corev1.ResourceList) {
		for _, name := range slices.Sorted(maps.Keys(l)) {
			q := l[name]
			field := kind + string(name)
			switch {
			case q.Sign() < 0:
				bad = append(bad, fmt.Sprintf("%s: %s must not be negative, got %s", where, field, q.String()))
			case isExtended(name) && !isWhole(q):
				bad = append(bad, fmt.Sprintf("%s: %s must be a whole number, got %s (extended resources are not divisible)", where, field, q.String()))
			}
		}
	}
	for _, s := range resourceSets(spec) {
		vet(s.where, "requests.", s.requests)
		vet(s.where, "limits.", s.limits)
	}
	vet("spec.pod.overhead", "", spec.Overhead)
	return bad
}

// isWhole tells whether q is a whole number.
func isWhole(q resource.Quantity) bool {
	c := q.DeepCopy()
	return c.RoundUp(0)
}

// isExtended tells whether name is an extended resource (a device plugin's,
// say nvidia.com/gpu): one outside the kubernetes.io domains, which
// Kubernetes only allocates in whole units.
func isExtended(name corev1.ResourceName) bool {
	domain, _, qualified := strings.Cut(string(name), "/")
	return qualified && domain != "kubernetes.io" && !strings.HasSuffix(domain, ".kubernetes.io") &&
		!strings.HasPrefix(string(name), corev1.DefaultResourceRequestsPrefix)
}

// malformedQuantities names the quantities of a raw ShadowPod that are no
// quantities at all, for a request the Go types cannot even decode: the API
// server's schema refuses them first, but the webhook answers whoever calls
// it, and "quantities must match the regular expression" says neither
// where nor which.
func malformedQuantities(raw []byte) []string {
	type resources struct {
		Requests map[string]json.RawMessage `json:"requests"`
		Limits   map[string]json.RawMessage `json:"limits"`
	}
	type container struct {
		Name      string    `json:"name"`
		Resources resources `json:"resources"`
	}
	var sp struct {
		Spec struct {
			Pod struct {
				InitContainers []container                `json:"initContainers"`
				Containers     []container                `json:"containers"`
				Resources      *resources                 `json:"resources"`
				Overhead       map[string]json.RawMessage `json:"overhead"`
			} `json:"pod"`
		} `json:"spec"`
	}
	if json.Unmarshal(raw, &sp) != nil {
		return nil
	}
	var bad []string
	check := func(where, kind string, l map[string]json.RawMessage) {
		for _, name := range slices.Sorted(maps.Keys(l)) {
			var q resource.Quantity
			if json.Unmarshal(l[name], &q) != nil {
				bad = append(bad, fmt.Sprintf("%s: %s%s %s is not a quantity (such as 500m, 2 or 1Gi)", where, kind, name, l[name]))
			}
		}
	}
	pod := &sp.Spec.Pod
	for _, c := range pod.InitContainers {
		check(fmt.Sprintf("init container %q", c.Name), "requests.", c.Resources.Requests)
		check(fmt.Sprintf("init container %q", c.Name), "limits.", c.Resources.Limits)
	}
	for _, c := range pod.Containers {
		check(fmt.Sprintf("container %q", c.Name), "requests.", c.Resources.Requests)
		check(fmt.Sprintf("container %q", c.Name), "limits.", c.Resources.Limits)
	}
	if r := pod.Resources; r != nil {
		check("spec.pod.resources", "requests.", r.Requests)
		check("spec.pod.resources", "limits.", r.Limits)
	}
	check("spec.pod.overhead", "", pod.Overhead)
	return bad
}

// resourceChanges lists how an update changes the resources of a pod spec,
// comparing amounts ("1" and "1000m" are the same). The real pod keeps the
// resources it was created with, so the quota must keep counting them: a
// change would free quota the pod still holds, or take quota the pod never
// gets.
func resourceChanges(old, spec *corev1.PodSpec) []string {
	var changes []string
	before := map[string]resourceSet{}
	for _, s := range resourceSets(old) {
		before[s.where] = s
	}
	seen := map[string]bool{}
	for _, s := range resourceSets(spec) {
		seen[s.where] = true
		o := before[s.where]
		if !quota.SameAmounts(o.requests, s.requests) {
			changes = append(changes, fmt.Sprintf("%s: requests changed from %s to %s", s.where, format(o.requests), format(s.requests)))
		}
		if !quota.SameAmounts(o.limits, s.limits) {
			changes = append(changes, fmt.Sprintf("%s: limits changed from %s to %s", s.where, format(o.limits), format(s.limits)))
		}
	}
	for _, s := range resourceSets(old) {
		if !seen[s.where] && (len(s.requests) > 0 || len(s.limits) > 0) {
			changes = append(changes, fmt.Sprintf("%s, with requests %s and limits %s, removed", s.where, format(s.requests), format(s.limits)))
		}
	}
	if !quota.SameAmounts(old.Overhead, spec.Overhead) {
		changes = append(changes, fmt.Sprintf("spec.pod.overhead changed from %s to %s", format(old.Overhead), format(spec.Overhead)))
	}
	if len(changes) > 0 {
		return changes
	}
	// Equal resources may still add up differently: an init container
	// turned into a sidecar runs beside the others instead of before them.
	if was, is := quota.UsageOf(old), quota.UsageOf(spec); !was.Equal(is) {
		changes = append(changes, fmt.Sprintf("what the pod takes from the quota changed from requests %s, limits %s to requests %s, limits %s",
			format(was.Requests), format(was.Limits), format(is.Requests), format(is.Limits)))
	}
	return changes
}

// format writes a resource list as "cpu=1,memory=1Gi", "none" if empty.
func format(l corev1.ResourceList) string {
	if len(l) == 0 {
		return "none"
	}
	parts := make([]string, 0, len(l))
	for _, name := range slices.Sorted(maps.Keys(l)) {
		q := l[name]
		parts = append(parts, string(name)+"="+q.String())
	}
	return strings.Join(parts, ",")
}
