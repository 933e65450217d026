// Package slices holds the resource negotiation: the consumer's ResourceSlice
// is replicated to the provider, which accepts it (whole, clamped to what it
// can share, or not at all) and creates the consumer's Quota.
package slices

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/liqo-go/liqo/pkg/consts"
)

// DefaultResources is what a slice asks for when it names nothing, as the
// documentation states: 4 CPUs, 8Gi of memory, 110 pods and 20Gi of
// ephemeral storage. A slice naming some of them asks for the default of
// the others (see WithDefaults). Ephemeral storage is among them because a
// virtual node without it refuses every pod with an ephemeral-storage
// request or limit (the scheduler reads a missing capacity as zero), and
// such pods are common (emptyDir size limits, charts setting limits).
func DefaultResources() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("4"),
		corev1.ResourceMemory:           resource.MustParse("8Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("20Gi"),
	}
}

// WithDefaults is the request a slice's resources make: every one of cpu,
// memory, pods and ephemeral-storage the slice does not name is asked for
// at its default, so that the Quota always bounds them. A slice naming only pods would
// otherwise leave its consumer's cpu and memory unbounded (a Quota bounds
// only what it lists). The default rather than zero: it is what naming
// nothing asks for, and what liqoctl's flags ask for when left out, so the
// slice gets no more than an empty one and remains usable by pods that
// request cpu or memory.
func WithDefaults(requested corev1.ResourceList) corev1.ResourceList {
	out := requested.DeepCopy()
	if out == nil {
		out = corev1.ResourceList{}
	}
	for name, q := range DefaultResources() {
		if _, ok := out[name]; !ok {
			out[name] = q
		}
	}
	return out
}

// Validate refuses a request the policy cannot decide: a negative amount,
// which granted would be a negative Quota, and would add to what the
// provider believes it has left for others.
func Validate(requested corev1.ResourceList) error {
	var bad []string
	for _, name := range sortedNames(requested) {
		if q := requested[name]; q.Sign() < 0 {
			bad = append(bad, fmt.Sprintf("%s: requested %s", name, q.String()))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("invalid request: requested resources must not be negative (%s)", strings.Join(bad, "; "))
	}
	return nil
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
			// A negative grant (stored before requests were validated)
			// takes nothing, and must not add to the share either.
			if used, ok := g[name]; ok && used.Sign() > 0 {
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

// alwaysBounded are the resources every grant names, zero if need be: a
// Quota without them would leave the consumer's use of them unbounded.
var alwaysBounded = []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods}

// Decide applies the provider's policy to a request. An invalid request
// (see Validate) is refused whatever the policy. cpu, memory and pods the
// request does not name are asked for at their defaults (see WithDefaults).
// With deny false, every resource is cut to what is left and the message
// says what was cut; with deny true, a request exceeding what is left is
// refused with the reason. A resource the provider does not have at all is
// never granted: named, it is granted as zero (or refused); left to its
// default, it is granted as zero too when it is cpu, memory or pods (a
// grant always bounds those), else left out, so that a provider whose
// nodes report no ephemeral storage (a kubelet without a local disk to
// account) still grants the rest of a default slice, even when it denies
// over-asks.
func Decide(requested, shareable corev1.ResourceList, deny bool) (accepted corev1.ResourceList, ok bool, msg string) {
	if err := Validate(requested); err != nil {
		return nil, false, err.Error()
	}
	full := WithDefaults(requested)
	accepted = corev1.ResourceList{}
	var cut, absent []string
	for _, name := range sortedNames(full) {
		want := full[name]
		have, exists := shareable[name]
		if _, named := requested[name]; !exists && !named && !slices.Contains(alwaysBounded, name) {
			absent = append(absent, string(name))
			continue
		}
		if !exists {
			have = resource.Quantity{}
		}
		if want.Cmp(have) <= 0 {
			accepted[name] = want
			continue
		}
		asked := want.String()
		if _, named := requested[name]; !named {
			asked += fmt.Sprintf(" (the default: the slice names no %s)", name)
		}
		cut = append(cut, fmt.Sprintf("%s: requested %s, %s left to share", name, asked, have.String()))
		accepted[name] = have
	}
	note := ""
	if len(absent) > 0 {
		note = fmt.Sprintf(" (none of the default %s: this cluster's nodes report none)", strings.Join(absent, ", "))
	}
	if len(cut) == 0 {
		return accepted, true, "all requested resources granted" + note
	}
	if deny {
		return nil, false, "not enough resources: " + strings.Join(cut, "; ")
	}
	return accepted, true, "granted up to the sharing limit (" + strings.Join(cut, "; ") + ")" + note
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
