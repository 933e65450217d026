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

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

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
// request does not name are asked for at their defaults (see authv1beta1.WithDefaultResources).
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
	full := authv1beta1.WithDefaultResources(requested)
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
