package offloading

import (
	corev1 "k8s.io/api/core/v1"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
)

// Phase summarises the per-cluster conditions of the selected clusters.
func Phase(terminating bool, conds map[string]offv1beta1.RemoteNamespaceConditions) offv1beta1.OffloadingPhase {
	if terminating {
		return offv1beta1.TerminatingOffloadingPhase
	}
	var selected, ready, failed int
	for _, cs := range conds {
		if status(cs, offv1beta1.NamespaceOffloadingRequired) != corev1.ConditionTrue {
			continue
		}
		selected++
		switch status(cs, offv1beta1.NamespaceReady) {
		case corev1.ConditionTrue:
			ready++
		case corev1.ConditionFalse:
			failed++
		}
	}
	switch {
	case selected == 0:
		return offv1beta1.NoClusterSelectedOffloadingPhase
	case ready == selected:
		return offv1beta1.ReadyOffloadingPhase
	case failed == selected:
		return offv1beta1.AllFailedOffloadingPhase
	case failed > 0:
		return offv1beta1.SomeFailedOffloadingPhase
	}
	return offv1beta1.InProgressOffloadingPhase
}

func status(cs offv1beta1.RemoteNamespaceConditions, t offv1beta1.RemoteNamespaceConditionType) corev1.ConditionStatus {
	for _, c := range cs {
		if c.Type == t {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}
