package kit

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/liqo-go/liqo/pkg/consts"
)

// AvoidVirtualNodes is the affinity of the pods our components run on the
// cluster's own nodes: a gateway or a node agent on a virtual node would be
// offloaded to a peer.
func AvoidVirtualNodes() *corev1.Affinity {
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key: consts.TypeLabel, Operator: corev1.NodeSelectorOpNotIn, Values: []string{consts.TypeVirtualNode},
			}},
		}}},
	}}
}
