package podpolicy

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/liqo-go/liqo/pkg/consts"
)

// nodeRolePrefix prefixes the taints (and labels) of nodes kept for a
// role, the control plane's above all.
const nodeRolePrefix = "node-role.kubernetes.io/"

// reservedTaints are taint keys a consumer's pod may never tolerate: the
// nodes carrying them are not shared.
var reservedTaints = map[string]string{
	"node.kubernetes.io/unschedulable": "cordoned nodes",
	// A provider that is itself a consumer of other clusters has virtual
	// nodes: a pod landing there would be offloaded again, to a third
	// cluster, in the provider's name and on its quota.
	consts.VirtualNodeTaintKey: "the provider's own virtual nodes",
}

// defaultSchedulerName is the scheduler every cluster runs; any other is
// one the provider runs for workloads of its choosing.
const defaultSchedulerName = "default-scheduler"

// vetScheduling refuses a pod choosing among the provider's nodes: the
// provider's scheduler places offloaded pods on the nodes it shares, and
// a consumer that could aim at a node (by name, by label, by co-location
// with pods of other namespaces, or by tolerating the taints that keep a
// node for the provider) could reach its control plane. Constraints among
// the pod's own kind are fine: spreading replicas, or anti-affinity with
// pods of its own namespace.
func (p *PodPolicy) vetScheduling(namespace string, spec *corev1.PodSpec, path *field.Path) []string {
	var bad []string
	const why = "the provider's scheduler places offloaded pods among the nodes it shares"
	if spec.NodeName != "" {
		bad = append(bad, fmt.Sprintf("%s must be empty, got %q: %s", path.Child("nodeName"), spec.NodeName, why))
	}
	if len(spec.NodeSelector) > 0 {
		bad = append(bad, fmt.Sprintf("%s must be empty, got %v: %s", path.Child("nodeSelector"), spec.NodeSelector, why))
	}
	if spec.SchedulerName != "" && spec.SchedulerName != defaultSchedulerName {
		bad = append(bad, fmt.Sprintf("%s must be empty or %s, got %q: %s", path.Child("schedulerName"), defaultSchedulerName, spec.SchedulerName, why))
	}
	if a := spec.Affinity; a != nil {
		aPath := path.Child("affinity")
		if a.NodeAffinity != nil {
			bad = append(bad, fmt.Sprintf("%s must not be set: %s", aPath.Child("nodeAffinity"), why))
		}
		if a.PodAffinity != nil {
			bad = append(bad, foreignPodTerms(namespace, aPath.Child("podAffinity"),
				a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution)...)
		}
		if a.PodAntiAffinity != nil {
			bad = append(bad, foreignPodTerms(namespace, aPath.Child("podAntiAffinity"),
				a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution)...)
		}
	}
	for i, t := range spec.Tolerations {
		if what := p.reservedToleration(t); what != "" {
			bad = append(bad, fmt.Sprintf("%s must not tolerate %s: offloaded pods may not run on nodes the provider keeps for itself",
				path.Child("tolerations").Index(i), what))
		}
	}
	return bad
}

// reservedToleration says what reserved taints t tolerates, "" if none.
func (p *PodPolicy) reservedToleration(t corev1.Toleration) string {
	switch {
	case t.Key == "":
		// The API allows an empty key only with Exists: every taint.
		return "every taint (empty key with operator Exists)"
	case strings.HasPrefix(t.Key, nodeRolePrefix):
		return fmt.Sprintf("%s, the taint of nodes kept for a role (the control plane's)", t.Key)
	case reservedTaints[t.Key] != "":
		return fmt.Sprintf("%s, the taint of %s", t.Key, reservedTaints[t.Key])
	case slices.Contains(p.ReservedTaints, t.Key):
		return fmt.Sprintf("%s, a taint this provider reserves", t.Key)
	}
	return ""
}

// foreignPodTerms refuses pod (anti-)affinity terms that look at pods of
// other namespaces: co-locating with (or avoiding) the provider's own
// pods would aim at the nodes that run them, and tell the consumer where
// they are.
func foreignPodTerms(namespace string, path *field.Path, required []corev1.PodAffinityTerm, preferred []corev1.WeightedPodAffinityTerm) []string {
	var bad []string
	check := func(p *field.Path, term *corev1.PodAffinityTerm) {
		if term.NamespaceSelector != nil {
			bad = append(bad, fmt.Sprintf("%s must not be set: offloaded pods may only be placed relative to pods of their own namespace",
				p.Child("namespaceSelector")))
		}
		for _, ns := range term.Namespaces {
			if ns != namespace {
				bad = append(bad, fmt.Sprintf("%s may only name %s, got %q: offloaded pods may only be placed relative to pods of their own namespace",
					p.Child("namespaces"), namespace, ns))
				break
			}
		}
	}
	for i := range required {
		check(path.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i), &required[i])
	}
	for i := range preferred {
		check(path.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i).Child("podAffinityTerm"), &preferred[i].PodAffinityTerm)
	}
	return bad
}
