package webhooktest

import (
	corev1 "k8s.io/api/core/v1"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// Req is the node selector requirement key op values.
func Req(key string, op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

// Term is the node selector term of rs, all required.
func Term(rs ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
	return corev1.NodeSelectorTerm{MatchExpressions: rs}
}

// Offloading is a NamespaceOffloading's spec of strategy and cluster
// selector terms.
func Offloading(strategy offv1beta1.PodOffloadingStrategy, selector ...corev1.NodeSelectorTerm) *offv1beta1.NamespaceOffloadingSpec {
	return &offv1beta1.NamespaceOffloadingSpec{PodOffloadingStrategy: strategy, ClusterSelector: corev1.NodeSelector{NodeSelectorTerms: selector}}
}

// Requirements the placement tests combine.
var (
	IsVirtual  = Req(consts.TypeLabel, corev1.NodeSelectorOpIn, consts.TypeVirtualNode)
	NotVirtual = Req(consts.TypeLabel, corev1.NodeSelectorOpNotIn, consts.TypeVirtualNode)
	South      = Req("topology.liqo.io/region", corev1.NodeSelectorOpIn, "south")
	// SeedToleration is the documented test-offload pod's toleration,
	// written by hand.
	SeedToleration = corev1.Toleration{Key: consts.VirtualNodeTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}
)
