// Package slices holds the resource negotiation: the consumer's ResourceSlice
// is replicated to the provider, which accepts it (whole, clamped to what it
// can share, or not at all) and creates the consumer's Quota.
package slices

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/liqo-go/liqo/pkg/consts"
)

// DefaultResources is what a slice asks for when it names nothing, as the
// documentation states: 4 CPUs, 8Gi of memory, 110 pods.
func DefaultResources() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("4"),
		corev1.ResourceMemory: resource.MustParse("8Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
}

// Shareable is what the provider can still offer: pct percent of the
// allocatable resources of its Ready physical nodes, less what other
// consumers were already granted.
func Shareable(nodes []corev1.Node, pct int, granted []corev1.ResourceList) corev1.ResourceList {
	total := corev1.ResourceList{}
	for i := range nodes {
		n := &nodes[i]
		if n.Labels[consts.TypeLabel] == consts.TypeVirtualNode || !nodeReady(n) {
			continue
		}
		for name, q := range n.Status.Allocatable {
			sum := total[name]
			sum.Add(q)
			total[name] = sum
		}
	}
	out := corev1.ResourceList{}
	for name, q := range total {
		share := scale(name, q, pct)
		for _, g := range granted {
			if used, ok := g[name]; ok {
				share.Sub(used)
			}
		}
		if share.Sign() < 0 {
			share = *resource.NewQuantity(0, q.Format)
		}
		out[name] = share
	}
	return out
}

// scale returns pct percent of q, rounded down: to milli-CPUs for CPU, to
// whole units for everything else (bytes, pods).
func scale(name corev1.ResourceName, q resource.Quantity, pct int) resource.Quantity {
	if name == corev1.ResourceCPU {
		return *resource.NewMilliQuantity(q.MilliValue()*int64(pct)/100, q.Format)
	}
	return *resource.NewQuantity(q.Value()*int64(pct)/100, q.Format)
}

// Decide applies the provider's policy to a request. With deny false, every
// resource is cut to what is left and the message says what was cut; with
// deny true, a request exceeding what is left is refused with the reason.
// A resource the provider does not have at all is never granted.
func Decide(requested, shareable corev1.ResourceList, deny bool) (accepted corev1.ResourceList, ok bool, msg string) {
	accepted = corev1.ResourceList{}
	var cut []string
	for _, name := range sortedNames(requested) {
		want := requested[name]
		have, exists := shareable[name]
		if !exists {
			have = resource.Quantity{}
		}
		if want.Cmp(have) <= 0 {
			accepted[name] = want
			continue
		}
		cut = append(cut, fmt.Sprintf("%s: requested %s, %s left to share", name, want.String(), have.String()))
		accepted[name] = have
	}
	if len(cut) == 0 {
		return accepted, true, "all requested resources granted"
	}
	if deny {
		return nil, false, "not enough resources: " + strings.Join(cut, "; ")
	}
	return accepted, true, "granted up to the sharing limit (" + strings.Join(cut, "; ") + ")"
}

// Canonical renders a resource list in a stable form, to tell whether a
// request changed since it was decided.
func Canonical(l corev1.ResourceList) string {
	parts := make([]string, 0, len(l))
	for _, name := range sortedNames(l) {
		q := l[name]
		parts = append(parts, string(name)+"="+q.String())
	}
	return strings.Join(parts, ",")
}

func sortedNames(l corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(l))
	for n := range l {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	return names
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
