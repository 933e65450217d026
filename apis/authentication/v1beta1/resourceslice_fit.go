package v1beta1

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxFitGroups bounds the groups of a FitSummary: a provider with many
// nodes groups them coarser rather than sending more, and a consumer
// refuses a longer summary.
const MaxFitGroups = 64

// FitSummary is what the provider's nodes that may run the consumer's pods
// can still take, so that the consumer binds to its virtual node only the
// pods one of them can run: the slice is the consumer's total, this is the
// largest pieces of it a single pod can get.
type FitSummary struct {
	// Groups of nodes, the largest free pieces first. Nodes of a group
	// each have at least its Free, its labels and its taints.
	// +optional
	// +kubebuilder:validation:MaxItems=64
	Groups []NodeFit `json:"groups,omitempty"`
	// Nodes is how many of the provider's nodes may run the consumer's
	// pods: those of the groups and those omitted.
	Nodes int32 `json:"nodes"`
	// Omitted is how many nodes no group stands for: with more than
	// MaxFitGroups sets of labels and taints, those of the smallest sets.
	// +optional
	Omitted int32 `json:"omitted,omitempty"`
	// UpdateTime is when the provider computed it.
	UpdateTime metav1.Time `json:"updateTime"`
}

// NodeFit is a group of identical (after rounding) provider nodes.
type NodeFit struct {
	// Count of nodes in the group.
	// +kubebuilder:validation:Minimum=1
	Count int32 `json:"count"`
	// Free is what each node of the group can still take at least: its
	// allocatable less the requests of the pods bound to it, rounded down
	// (CPU to 100m, memory and ephemeral storage to 32Mi).
	// +kubebuilder:validation:Type=object
	// +kubebuilder:validation:MaxProperties=64
	Free corev1.ResourceList `json:"free"`
	// Labels of the nodes that pods may select (the provider publishes
	// the keys of its choice: topology, architecture, instance type).
	// +optional
	// +kubebuilder:validation:MaxProperties=32
	Labels map[string]string `json:"labels,omitempty"`
	// Taints of the nodes with the NoSchedule or NoExecute effect.
	// +optional
	// +kubebuilder:validation:MaxItems=32
	Taints []corev1.Taint `json:"taints,omitempty"`
}

// Validate checks a summary a provider sent: a consumer places pods with
// it, so an invalid one (too long, negative or absurd counts) is dropped
// rather than trusted.
func (f *FitSummary) Validate() error {
	if len(f.Groups) > MaxFitGroups {
		return fmt.Errorf("%d groups, more than %d", len(f.Groups), MaxFitGroups)
	}
	var total int64
	for i, g := range f.Groups {
		if g.Count < 1 {
			return fmt.Errorf("group %d: count %d", i, g.Count)
		}
		total += int64(g.Count)
		if len(g.Free) > 64 || len(g.Labels) > 32 || len(g.Taints) > 32 {
			return fmt.Errorf("group %d: more than 64 resources, 32 labels or 32 taints", i)
		}
		for name, q := range g.Free {
			if q.Sign() < 0 {
				return fmt.Errorf("group %d: negative free %s", i, name)
			}
		}
	}
	if f.Nodes < 0 || f.Omitted < 0 || total > int64(f.Nodes) {
		return fmt.Errorf("%d nodes, %d omitted, %d in groups", f.Nodes, f.Omitted, total)
	}
	return nil
}

// Largest is the largest free piece of the summary, by CPU then memory:
// the most a single pod can get on one of the provider's nodes. Nil for a
// summary without groups.
func (f *FitSummary) Largest() corev1.ResourceList {
	var best corev1.ResourceList
	for _, g := range f.Groups {
		if best == nil || g.Free.Cpu().Cmp(*best.Cpu()) > 0 ||
			(g.Free.Cpu().Cmp(*best.Cpu()) == 0 && g.Free.Memory().Cmp(*best.Memory()) > 0) {
			best = g.Free
		}
	}
	return best
}
