package fit

import (
	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
)

// Fits says whether a pod requesting requests and tolerating tolerations
// fits one node of the summary: every request within the group's free
// resources (a resource the group does not list is zero there), and every
// NoSchedule or NoExecute taint of the group tolerated.
func Fits(s *authv1beta1.FitSummary, requests corev1.ResourceList, tolerations []corev1.Toleration) bool {
	for i := range s.Groups {
		if groupFits(&s.Groups[i], requests, tolerations) {
			return true
		}
	}
	return false
}

func groupFits(g *authv1beta1.NodeFit, requests corev1.ResourceList, tolerations []corev1.Toleration) bool {
	if !covers(g.Free, requests) {
		return false
	}
	_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(g.Taints, tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	})
	return !untolerated
}

// Reserve is the summary s less reservations (pods' requests), each taken
// first-fit from the largest free piece that holds it: what the nodes can
// still take once those pods run. A reservation that fits nowhere (the
// summary shrank meanwhile) takes nothing. Groups come back as single
// nodes where reservations split them.
func Reserve(s *authv1beta1.FitSummary, reservations []corev1.ResourceList) *authv1beta1.FitSummary {
	// One slot per node, but no more of a group than there are
	// reservations: the rest of the group is untouched.
	type slot struct {
		g    int
		free corev1.ResourceList
	}
	var slots []slot
	rest := make([]int32, len(s.Groups))
	for i, g := range s.Groups {
		n := min(int(g.Count), len(reservations))
		for range n {
			slots = append(slots, slot{g: i, free: g.Free.DeepCopy()})
		}
		rest[i] = g.Count - int32(n)
	}
	for _, req := range reservations {
		for i := range slots {
			if !covers(slots[i].free, req) {
				continue
			}
			for name, q := range req {
				f := slots[i].free[name]
				f.Sub(q)
				slots[i].free[name] = f
			}
			break
		}
	}
	out := &authv1beta1.FitSummary{Nodes: s.Nodes, Omitted: s.Omitted, UpdateTime: s.UpdateTime}
	for i, g := range s.Groups {
		if rest[i] > 0 {
			g.Count = rest[i]
			out.Groups = append(out.Groups, g)
		}
	}
	for _, sl := range slots {
		g := s.Groups[sl.g]
		out.Groups = append(out.Groups, authv1beta1.NodeFit{Count: 1, Free: sl.free, Labels: g.Labels, Taints: g.Taints})
	}
	return out
}

// covers tells whether have holds every positive request of want.
func covers(have, want corev1.ResourceList) bool {
	for name, q := range want {
		if q.Sign() <= 0 {
			continue
		}
		h, ok := have[name]
		if !ok || h.Cmp(q) < 0 {
			return false
		}
	}
	return true
}
