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
	for name, want := range requests {
		if want.Sign() <= 0 {
			continue
		}
		free, ok := g.Free[name]
		if !ok || free.Cmp(want) < 0 {
			return false
		}
	}
	_, untolerated := corev1helpers.FindMatchingUntoleratedTaint(g.Taints, tolerations, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	})
	return !untolerated
}

// Largest is the largest free piece of the summary (by CPU, then memory),
// for messages saying why a pod fits nowhere; nil for an empty summary.
func Largest(s *authv1beta1.FitSummary) corev1.ResourceList {
	var best corev1.ResourceList
	for _, g := range s.Groups {
		if best == nil || larger(g.Free, best) < 0 {
			best = g.Free
		}
	}
	return best
}
