package podplacement

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// VirtualNodeToleration tolerates the taint every virtual node carries.
func VirtualNodeToleration() corev1.Toleration {
	return corev1.Toleration{Key: consts.VirtualNodeTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}
}

var (
	onVirtualNode  = corev1.NodeSelectorRequirement{Key: consts.TypeLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{consts.TypeVirtualNode}}
	notVirtualNode = corev1.NodeSelectorRequirement{Key: consts.TypeLabel, Operator: corev1.NodeSelectorOpNotIn, Values: []string{consts.TypeVirtualNode}}
)

// placement is what a pod offloading strategy demands of a pod: whether it
// must tolerate the virtual-node taint, and the node selector terms (ORed)
// it must satisfy; nil terms leave the pod's affinity alone.
type placement struct {
	tolerate bool
	terms    []corev1.NodeSelectorTerm
	// allows tells, in words, which nodes the strategy allows.
	allows string
}

// placementFor turns a NamespaceOffloading spec into the placement its pods
// get, as the documentation's pod offloading strategies describe it:
// LocalAndRemote tolerates virtual nodes and, with a cluster selector, allows
// local nodes or the selected virtual nodes; Remote allows the (selected)
// virtual nodes only; Local allows local nodes only, even to a pod carrying
// the toleration itself.
func placementFor(spec *offv1beta1.NamespaceOffloadingSpec) placement {
	selector := spec.ClusterSelector.NodeSelectorTerms
	onSelected := func() []corev1.NodeSelectorTerm {
		if len(selector) == 0 {
			return []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{onVirtualNode}}}
		}
		out := make([]corev1.NodeSelectorTerm, 0, len(selector))
		for _, t := range selector {
			out = append(out, and(t, corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{onVirtualNode}}))
		}
		return out
	}
	local := corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{notVirtualNode}}
	switch spec.PodOffloadingStrategy {
	case offv1beta1.LocalPodOffloadingStrategy:
		return placement{terms: []corev1.NodeSelectorTerm{local}, allows: "local nodes only"}
	case offv1beta1.RemotePodOffloadingStrategy:
		if len(selector) == 0 {
			return placement{tolerate: true, terms: onSelected(), allows: "virtual nodes only"}
		}
		return placement{tolerate: true, terms: onSelected(), allows: "only the virtual nodes matching the cluster selector"}
	default: // LocalAndRemote, also when the CRD default was not applied.
		if len(selector) == 0 {
			return placement{tolerate: true, allows: "every node"}
		}
		return placement{tolerate: true, terms: append([]corev1.NodeSelectorTerm{local}, onSelected()...),
			allows: "local nodes, or the virtual nodes matching the cluster selector"}
	}
}

// MutatePod returns a copy of pod placed as the NamespaceOffloading spec of
// its namespace demands, and, when the pod's own nodeSelector and required
// node affinity leave no node that the strategy allows, a conflict in words
// (the pod is still returned: it will stay Pending, and the caller tells the
// user why).
//
// Node selector terms are ORed, so the pod's required terms are combined
// with the strategy's by distributing the AND: every pod term joined with
// every strategy term. The pod's nodeSelector is kept as is (the scheduler
// ANDs it with the affinity), and a toleration is added only if none of the
// pod's own already tolerates the virtual-node taint.
func MutatePod(pod *corev1.Pod, spec *offv1beta1.NamespaceOffloadingSpec) (*corev1.Pod, string) {
	out := pod.DeepCopy()
	p := placementFor(spec)
	if p.tolerate && !toleratesVirtualNodes(out.Spec.Tolerations) {
		out.Spec.Tolerations = append(out.Spec.Tolerations, VirtualNodeToleration())
	}
	if p.tolerate {
		holdForPlacement(out)
	}
	if p.terms == nil {
		return out, ""
	}

	own := RequiredTerms(pod)
	merged := p.terms
	if own != nil {
		merged = make([]corev1.NodeSelectorTerm, 0, len(own)*len(p.terms))
		for _, o := range own {
			for _, s := range p.terms {
				merged = appendTerm(merged, and(o, s))
			}
		}
	}
	setRequiredTerms(out, merged)

	if satisfiable(own, pod.Spec.NodeSelector) && !satisfiable(merged, pod.Spec.NodeSelector) {
		strategy := spec.PodOffloadingStrategy
		if strategy == "" {
			strategy = offv1beta1.LocalAndRemotePodOffloadingStrategy
		}
		return out, fmt.Sprintf("the pod's nodeSelector and required node affinity exclude every node that the %s pod offloading strategy of its namespace allows (%s): the pod will stay Pending",
			strategy, p.allows)
	}
	return out, ""
}

// holdForPlacement gates a pod that may go to a virtual node and asks for
// resources, until the placement controller (pkg/placement/gate) has kept
// it off the virtual nodes whose provider has no node it fits on. A pod
// asking for nothing fits anywhere there is room for a pod, and one bound
// already (nodeName set) is not scheduled: both go on at once.
func holdForPlacement(pod *corev1.Pod) {
	if pod.Spec.NodeName != "" || !requestsResources(pod) {
		return
	}
	for _, g := range pod.Spec.SchedulingGates {
		if g.Name == consts.PlacementGate {
			return
		}
	}
	pod.Spec.SchedulingGates = append(pod.Spec.SchedulingGates, corev1.PodSchedulingGate{Name: consts.PlacementGate})
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[consts.PlacementLabel] = "pending"
}

// requestsResources tells whether a container of pod requests (or limits,
// which default the request) any resource.
func requestsResources(pod *corev1.Pod) bool {
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			for _, l := range []corev1.ResourceList{c.Resources.Requests, c.Resources.Limits} {
				for _, q := range l {
					if q.Sign() > 0 {
						return true
					}
				}
			}
		}
	}
	return false
}

// toleratesVirtualNodes tells whether one of ts tolerates the virtual-node
// taint, so that a pod written for virtual nodes (like the documented
// test-offload pod) does not get a second, identical toleration.
func toleratesVirtualNodes(ts []corev1.Toleration) bool {
	taint := &corev1.Taint{Key: consts.VirtualNodeTaintKey, Value: consts.VirtualNodeTaintVal, Effect: corev1.TaintEffectNoExecute}
	for i := range ts {
		if ts[i].ToleratesTaint(taint) {
			return true
		}
	}
	return false
}

// requiredTerms is the pod's required node affinity; nil when it has none.
func RequiredTerms(pod *corev1.Pod) []corev1.NodeSelectorTerm { return requiredTermsOf(&pod.Spec) }

func requiredTermsOf(spec *corev1.PodSpec) []corev1.NodeSelectorTerm {
	a := spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return nil
	}
	return a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
}

func setRequiredTerms(pod *corev1.Pod, terms []corev1.NodeSelectorTerm) {
	setRequiredTermsOf(&pod.Spec, terms)
}

func setRequiredTermsOf(spec *corev1.PodSpec, terms []corev1.NodeSelectorTerm) {
	if spec.Affinity == nil {
		spec.Affinity = &corev1.Affinity{}
	}
	if spec.Affinity.NodeAffinity == nil {
		spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{NodeSelectorTerms: terms}
}

// and joins two terms. An empty term matches no node, so joining it with
// anything still matches none and stays empty rather than becoming the
// other term.
func and(a, b corev1.NodeSelectorTerm) corev1.NodeSelectorTerm {
	if isEmpty(a) || isEmpty(b) {
		return corev1.NodeSelectorTerm{}
	}
	var t corev1.NodeSelectorTerm
	for _, r := range slices.Concat(a.MatchExpressions, b.MatchExpressions) {
		t.MatchExpressions = appendRequirement(t.MatchExpressions, r)
	}
	for _, r := range slices.Concat(a.MatchFields, b.MatchFields) {
		t.MatchFields = appendRequirement(t.MatchFields, r)
	}
	return t
}

func isEmpty(t corev1.NodeSelectorTerm) bool {
	return len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0
}

// appendRequirement and appendTerm skip duplicates, so that a pod already
// asking for what the strategy asks does not end up with it twice.
func appendRequirement(rs []corev1.NodeSelectorRequirement, r corev1.NodeSelectorRequirement) []corev1.NodeSelectorRequirement {
	for i := range rs {
		if equality.Semantic.DeepEqual(rs[i], r) {
			return rs
		}
	}
	return append(rs, r)
}

func appendTerm(ts []corev1.NodeSelectorTerm, t corev1.NodeSelectorTerm) []corev1.NodeSelectorTerm {
	for i := range ts {
		if equality.Semantic.DeepEqual(ts[i], t) {
			return ts
		}
	}
	return append(ts, t)
}
