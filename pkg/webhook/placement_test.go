package webhook

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

func req(key string, op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

func term(rs ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
	return corev1.NodeSelectorTerm{MatchExpressions: rs}
}

func spec(strategy offv1beta1.PodOffloadingStrategy, selector ...corev1.NodeSelectorTerm) *offv1beta1.NamespaceOffloadingSpec {
	return &offv1beta1.NamespaceOffloadingSpec{PodOffloadingStrategy: strategy, ClusterSelector: corev1.NodeSelector{NodeSelectorTerms: selector}}
}

func podWith(nodeSelector map[string]string, tolerations []corev1.Toleration, terms ...corev1.NodeSelectorTerm) *corev1.Pod {
	p := &corev1.Pod{Spec: corev1.PodSpec{NodeSelector: nodeSelector, Tolerations: tolerations,
		Containers: []corev1.Container{{Name: "app", Image: "busybox"}}}}
	if terms != nil {
		setRequiredTerms(p, terms)
	}
	return p
}

var (
	isVirtual  = req(consts.TypeLabel, corev1.NodeSelectorOpIn, consts.TypeVirtualNode)
	notVirtual = req(consts.TypeLabel, corev1.NodeSelectorOpNotIn, consts.TypeVirtualNode)
	south      = req("topology.liqo.io/region", corev1.NodeSelectorOpIn, "south")
	center     = req("topology.liqo.io/region", corev1.NodeSelectorOpIn, "center")
	worker0    = req("kubernetes.io/hostname", corev1.NodeSelectorOpIn, "worker-0")
	toleration = virtualNodeToleration()
	// The documented test-offload pod's toleration, written by hand.
	seedToleration = corev1.Toleration{Key: consts.VirtualNodeTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}
	toVirtualNode  = map[string]string{consts.TypeLabel: consts.TypeVirtualNode}
)

func TestMutatePod(t *testing.T) {
	tests := []struct {
		name        string
		pod         *corev1.Pod
		spec        *offv1beta1.NamespaceOffloadingSpec
		tolerations []corev1.Toleration
		terms       []corev1.NodeSelectorTerm // nil: no required affinity
		conflict    string                    // a word the conflict must contain; "" for none
	}{
		{name: "LocalAndRemote without selector only tolerates virtual nodes",
			pod: podWith(nil, nil), spec: spec(offv1beta1.LocalAndRemotePodOffloadingStrategy),
			tolerations: []corev1.Toleration{toleration}},
		{name: "the CRD default strategy is LocalAndRemote",
			pod: podWith(nil, nil), spec: spec(""),
			tolerations: []corev1.Toleration{toleration}},
		{name: "LocalAndRemote with selector: local nodes or selected virtual nodes",
			pod: podWith(nil, nil), spec: spec(offv1beta1.LocalAndRemotePodOffloadingStrategy, term(south)),
			tolerations: []corev1.Toleration{toleration},
			terms:       []corev1.NodeSelectorTerm{term(notVirtual), term(south, isVirtual)}},
		{name: "LocalAndRemote with two selector terms keeps them ORed",
			pod: podWith(nil, nil), spec: spec(offv1beta1.LocalAndRemotePodOffloadingStrategy, term(south), term(center)),
			tolerations: []corev1.Toleration{toleration},
			terms:       []corev1.NodeSelectorTerm{term(notVirtual), term(south, isVirtual), term(center, isVirtual)}},
		{name: "Remote without selector: any virtual node",
			pod: podWith(nil, nil), spec: spec(offv1beta1.RemotePodOffloadingStrategy),
			tolerations: []corev1.Toleration{toleration},
			terms:       []corev1.NodeSelectorTerm{term(isVirtual)}},
		{name: "Remote with selector: the selected virtual nodes",
			pod: podWith(nil, nil), spec: spec(offv1beta1.RemotePodOffloadingStrategy, term(south)),
			tolerations: []corev1.Toleration{toleration},
			terms:       []corev1.NodeSelectorTerm{term(south, isVirtual)}},
		{name: "Local: no toleration, never a virtual node",
			pod: podWith(nil, nil), spec: spec(offv1beta1.LocalPodOffloadingStrategy),
			terms: []corev1.NodeSelectorTerm{term(notVirtual)}},
		{name: "Local keeps a pod carrying its own toleration local",
			pod: podWith(nil, []corev1.Toleration{seedToleration}), spec: spec(offv1beta1.LocalPodOffloadingStrategy),
			tolerations: []corev1.Toleration{seedToleration},
			terms:       []corev1.NodeSelectorTerm{term(notVirtual)}},
		{name: "the documented test-offload pod gets no second toleration",
			pod: podWith(toVirtualNode, []corev1.Toleration{seedToleration}), spec: spec(offv1beta1.LocalAndRemotePodOffloadingStrategy),
			tolerations: []corev1.Toleration{seedToleration}},
		{name: "a toleration of every taint already covers virtual nodes",
			pod: podWith(nil, []corev1.Toleration{{Operator: corev1.TolerationOpExists}}), spec: spec(offv1beta1.RemotePodOffloadingStrategy),
			tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			terms:       []corev1.NodeSelectorTerm{term(isVirtual)}},
		{name: "a NoSchedule toleration does not cover the NoExecute taint",
			pod:  podWith(nil, []corev1.Toleration{{Key: consts.VirtualNodeTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}),
			spec: spec(offv1beta1.LocalAndRemotePodOffloadingStrategy),
			tolerations: []corev1.Toleration{
				{Key: consts.VirtualNodeTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}, toleration}},
		{name: "the pod's terms are ANDed pairwise with the strategy's",
			pod:         podWith(nil, nil, term(worker0), term(center)),
			spec:        spec(offv1beta1.LocalAndRemotePodOffloadingStrategy, term(south)),
			tolerations: []corev1.Toleration{toleration},
			terms: []corev1.NodeSelectorTerm{
				term(worker0, notVirtual), term(worker0, south, isVirtual),
				term(center, notVirtual), term(center, south, isVirtual)}},
		{name: "the pod's nodeSelector is kept and agrees with Remote",
			pod: podWith(toVirtualNode, nil), spec: spec(offv1beta1.RemotePodOffloadingStrategy),
			tolerations: []corev1.Toleration{toleration},
			terms:       []corev1.NodeSelectorTerm{term(isVirtual)}},
		{name: "a requirement the pod already has is not repeated",
			pod: podWith(nil, nil, term(isVirtual)), spec: spec(offv1beta1.RemotePodOffloadingStrategy),
			tolerations: []corev1.Toleration{toleration},
			terms:       []corev1.NodeSelectorTerm{term(isVirtual)}},
		{name: "MatchFields are kept next to the expressions",
			pod:  podWith(nil, nil, corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{req("metadata.name", corev1.NodeSelectorOpIn, "milan")}}),
			spec: spec(offv1beta1.RemotePodOffloadingStrategy), tolerations: []corev1.Toleration{toleration},
			terms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{isVirtual},
				MatchFields: []corev1.NodeSelectorRequirement{req("metadata.name", corev1.NodeSelectorOpIn, "milan")}}}},
		{name: "an empty selector term matches no cluster and stays empty",
			pod: podWith(nil, nil), spec: spec(offv1beta1.RemotePodOffloadingStrategy, corev1.NodeSelectorTerm{}, term(south)),
			tolerations: []corev1.Toleration{toleration},
			terms:       []corev1.NodeSelectorTerm{{}, term(south, isVirtual)}},

		// Contradictions: admitted, mutated, and reported.
		{name: "nodeSelector for a virtual node in a Local namespace",
			pod: podWith(toVirtualNode, []corev1.Toleration{seedToleration}), spec: spec(offv1beta1.LocalPodOffloadingStrategy),
			tolerations: []corev1.Toleration{seedToleration},
			terms:       []corev1.NodeSelectorTerm{term(notVirtual)}, conflict: "Local"},
		{name: "affinity for a non-virtual node in a Remote namespace",
			pod: podWith(nil, nil, term(notVirtual)), spec: spec(offv1beta1.RemotePodOffloadingStrategy),
			tolerations: []corev1.Toleration{toleration},
			terms:       []corev1.NodeSelectorTerm{term(notVirtual, isVirtual)}, conflict: "Remote"},
		{name: "DoesNotExist on the type label in a Remote namespace",
			pod:         podWith(nil, nil, term(req(consts.TypeLabel, corev1.NodeSelectorOpDoesNotExist))),
			spec:        spec(offv1beta1.RemotePodOffloadingStrategy),
			tolerations: []corev1.Toleration{toleration},
			terms:       []corev1.NodeSelectorTerm{term(req(consts.TypeLabel, corev1.NodeSelectorOpDoesNotExist), isVirtual)}, conflict: "virtual nodes only"},
		{name: "a region the selector excludes, on a virtual node",
			pod:  podWith(map[string]string{consts.TypeLabel: consts.TypeVirtualNode, "topology.liqo.io/region": "center"}, nil),
			spec: spec(offv1beta1.LocalAndRemotePodOffloadingStrategy, term(south)), tolerations: []corev1.Toleration{toleration},
			terms:    []corev1.NodeSelectorTerm{term(notVirtual), term(south, isVirtual)},
			conflict: "cluster selector"},
		{name: "one satisfiable pod term is enough",
			pod: podWith(nil, nil, term(notVirtual), term(worker0)), spec: spec(offv1beta1.RemotePodOffloadingStrategy),
			tolerations: []corev1.Toleration{toleration},
			terms:       []corev1.NodeSelectorTerm{term(notVirtual, isVirtual), term(worker0, isVirtual)}},
		{name: "a pod already unsatisfiable is not the strategy's conflict",
			pod:  podWith(nil, nil, term(req("a", corev1.NodeSelectorOpIn, "x"), req("a", corev1.NodeSelectorOpNotIn, "x"))),
			spec: spec(offv1beta1.RemotePodOffloadingStrategy), tolerations: []corev1.Toleration{toleration},
			terms: []corev1.NodeSelectorTerm{term(req("a", corev1.NodeSelectorOpIn, "x"), req("a", corev1.NodeSelectorOpNotIn, "x"), isVirtual)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.pod.DeepCopy()
			got, conflict := MutatePod(tt.pod, tt.spec)
			if !equality.Semantic.DeepEqual(tt.pod, before) {
				t.Errorf("the input pod was modified")
			}
			if !equality.Semantic.DeepEqual(got.Spec.Tolerations, tt.tolerations) {
				t.Errorf("tolerations = %+v, want %+v", got.Spec.Tolerations, tt.tolerations)
			}
			if gotTerms := requiredTerms(got); !equality.Semantic.DeepEqual(gotTerms, tt.terms) {
				t.Errorf("required terms =\n  %+v\nwant\n  %+v", gotTerms, tt.terms)
			}
			if !equality.Semantic.DeepEqual(got.Spec.NodeSelector, tt.pod.Spec.NodeSelector) {
				t.Errorf("nodeSelector changed to %v", got.Spec.NodeSelector)
			}
			switch {
			case tt.conflict == "" && conflict != "":
				t.Errorf("unexpected conflict: %s", conflict)
			case tt.conflict != "" && !strings.Contains(conflict, tt.conflict):
				t.Errorf("conflict = %q, want one mentioning %q", conflict, tt.conflict)
			}
		})
	}
}

func TestSatisfiable(t *testing.T) {
	tests := []struct {
		name         string
		terms        []corev1.NodeSelectorTerm
		nodeSelector map[string]string
		want         bool
	}{
		{"no constraint at all", nil, nil, true},
		{"a nodeSelector alone", nil, map[string]string{"a": "x"}, true},
		{"only empty terms match nothing", []corev1.NodeSelectorTerm{{}}, nil, false},
		{"In and NotIn of the same value", []corev1.NodeSelectorTerm{term(req("a", corev1.NodeSelectorOpIn, "x"), req("a", corev1.NodeSelectorOpNotIn, "x"))}, nil, false},
		{"In and NotIn leaving a value", []corev1.NodeSelectorTerm{term(req("a", corev1.NodeSelectorOpIn, "x", "y"), req("a", corev1.NodeSelectorOpNotIn, "x"))}, nil, true},
		{"disjoint In sets", []corev1.NodeSelectorTerm{term(req("a", corev1.NodeSelectorOpIn, "x"), req("a", corev1.NodeSelectorOpIn, "y"))}, nil, false},
		{"nodeSelector against NotIn", []corev1.NodeSelectorTerm{term(req("a", corev1.NodeSelectorOpNotIn, "x"))}, map[string]string{"a": "x"}, false},
		{"nodeSelector against DoesNotExist", []corev1.NodeSelectorTerm{term(req("a", corev1.NodeSelectorOpDoesNotExist))}, map[string]string{"a": "x"}, false},
		{"Exists and DoesNotExist", []corev1.NodeSelectorTerm{term(req("a", corev1.NodeSelectorOpExists), req("a", corev1.NodeSelectorOpDoesNotExist))}, nil, false},
		{"NotIn and DoesNotExist agree", []corev1.NodeSelectorTerm{term(req("a", corev1.NodeSelectorOpNotIn, "x"), req("a", corev1.NodeSelectorOpDoesNotExist))}, nil, true},
		{"Gt and Lt with room", []corev1.NodeSelectorTerm{term(req("n", corev1.NodeSelectorOpGt, "1"), req("n", corev1.NodeSelectorOpLt, "3"))}, nil, true},
		{"Gt and Lt without room", []corev1.NodeSelectorTerm{term(req("n", corev1.NodeSelectorOpGt, "1"), req("n", corev1.NodeSelectorOpLt, "2"))}, nil, false},
		{"Gt against an In value", []corev1.NodeSelectorTerm{term(req("n", corev1.NodeSelectorOpGt, "5"), req("n", corev1.NodeSelectorOpIn, "3", "7"))}, nil, true},
		{"Gt against a non-numeric In value", []corev1.NodeSelectorTerm{term(req("n", corev1.NodeSelectorOpGt, "5"), req("n", corev1.NodeSelectorOpIn, "x"))}, nil, false},
		{"fields are separate from labels", []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{req("metadata.name", corev1.NodeSelectorOpIn, "a")},
			MatchFields:      []corev1.NodeSelectorRequirement{req("metadata.name", corev1.NodeSelectorOpNotIn, "a")}}}, nil, true},
		{"contradicting fields", []corev1.NodeSelectorTerm{{
			MatchFields: []corev1.NodeSelectorRequirement{req("metadata.name", corev1.NodeSelectorOpIn, "a"), req("metadata.name", corev1.NodeSelectorOpNotIn, "a")}}}, nil, false},
		{"one good term of two", []corev1.NodeSelectorTerm{term(req("a", corev1.NodeSelectorOpIn, "x")), term(req("a", corev1.NodeSelectorOpIn, "y"))}, map[string]string{"a": "y"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := satisfiable(tt.terms, tt.nodeSelector); got != tt.want {
				t.Errorf("satisfiable = %v, want %v", got, tt.want)
			}
		})
	}
}
