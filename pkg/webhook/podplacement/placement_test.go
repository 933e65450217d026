package podplacement

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
)

func podWith(nodeSelector map[string]string, tolerations []corev1.Toleration, terms ...corev1.NodeSelectorTerm) *corev1.Pod {
	p := &corev1.Pod{Spec: corev1.PodSpec{NodeSelector: nodeSelector, Tolerations: tolerations,
		Containers: []corev1.Container{{Name: "app", Image: "busybox"}}}}
	if terms != nil {
		setRequiredTerms(p, terms)
	}
	return p
}

var (
	center        = webhooktest.Req("topology.liqo.io/region", corev1.NodeSelectorOpIn, "center")
	worker0       = webhooktest.Req("kubernetes.io/hostname", corev1.NodeSelectorOpIn, "worker-0")
	toleration    = VirtualNodeToleration()
	toVirtualNode = map[string]string{consts.TypeLabel: consts.TypeVirtualNode}
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
			pod: podWith(nil, nil), spec: webhooktest.Offloading(offv1beta1.LocalAndRemotePodOffloadingStrategy),
			tolerations: []corev1.Toleration{toleration}},
		{name: "the CRD default strategy is LocalAndRemote",
			pod: podWith(nil, nil), spec: webhooktest.Offloading(""),
			tolerations: []corev1.Toleration{toleration}},
		{name: "LocalAndRemote with selector: local nodes or selected virtual nodes",
			pod: podWith(nil, nil), spec: webhooktest.Offloading(offv1beta1.LocalAndRemotePodOffloadingStrategy, webhooktest.Term(webhooktest.South)),
			tolerations: []corev1.Toleration{toleration},
			terms:       []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.NotVirtual), webhooktest.Term(webhooktest.South, webhooktest.IsVirtual)}},
		{name: "LocalAndRemote with two selector terms keeps them ORed",
			pod: podWith(nil, nil), spec: webhooktest.Offloading(offv1beta1.LocalAndRemotePodOffloadingStrategy, webhooktest.Term(webhooktest.South), webhooktest.Term(center)),
			tolerations: []corev1.Toleration{toleration},
			terms:       []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.NotVirtual), webhooktest.Term(webhooktest.South, webhooktest.IsVirtual), webhooktest.Term(center, webhooktest.IsVirtual)}},
		{name: "Remote without selector: any virtual node",
			pod: podWith(nil, nil), spec: webhooktest.Offloading(offv1beta1.RemotePodOffloadingStrategy),
			tolerations: []corev1.Toleration{toleration},
			terms:       []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.IsVirtual)}},
		{name: "Remote with selector: the selected virtual nodes",
			pod: podWith(nil, nil), spec: webhooktest.Offloading(offv1beta1.RemotePodOffloadingStrategy, webhooktest.Term(webhooktest.South)),
			tolerations: []corev1.Toleration{toleration},
			terms:       []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.South, webhooktest.IsVirtual)}},
		{name: "Local: no toleration, never a virtual node",
			pod: podWith(nil, nil), spec: webhooktest.Offloading(offv1beta1.LocalPodOffloadingStrategy),
			terms: []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.NotVirtual)}},
		{name: "Local keeps a pod carrying its own toleration local",
			pod: podWith(nil, []corev1.Toleration{webhooktest.SeedToleration}), spec: webhooktest.Offloading(offv1beta1.LocalPodOffloadingStrategy),
			tolerations: []corev1.Toleration{webhooktest.SeedToleration},
			terms:       []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.NotVirtual)}},
		{name: "the documented test-offload pod gets no second toleration",
			pod: podWith(toVirtualNode, []corev1.Toleration{webhooktest.SeedToleration}), spec: webhooktest.Offloading(offv1beta1.LocalAndRemotePodOffloadingStrategy),
			tolerations: []corev1.Toleration{webhooktest.SeedToleration}},
		{name: "a toleration of every taint already covers virtual nodes",
			pod: podWith(nil, []corev1.Toleration{{Operator: corev1.TolerationOpExists}}), spec: webhooktest.Offloading(offv1beta1.RemotePodOffloadingStrategy),
			tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			terms:       []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.IsVirtual)}},
		{name: "a NoSchedule toleration does not cover the NoExecute taint",
			pod:  podWith(nil, []corev1.Toleration{{Key: consts.VirtualNodeTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}),
			spec: webhooktest.Offloading(offv1beta1.LocalAndRemotePodOffloadingStrategy),
			tolerations: []corev1.Toleration{
				{Key: consts.VirtualNodeTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}, toleration}},
		{name: "the pod's terms are ANDed pairwise with the strategy's",
			pod:         podWith(nil, nil, webhooktest.Term(worker0), webhooktest.Term(center)),
			spec:        webhooktest.Offloading(offv1beta1.LocalAndRemotePodOffloadingStrategy, webhooktest.Term(webhooktest.South)),
			tolerations: []corev1.Toleration{toleration},
			terms: []corev1.NodeSelectorTerm{
				webhooktest.Term(worker0, webhooktest.NotVirtual), webhooktest.Term(worker0, webhooktest.South, webhooktest.IsVirtual),
				webhooktest.Term(center, webhooktest.NotVirtual), webhooktest.Term(center, webhooktest.South, webhooktest.IsVirtual)}},
		{name: "the pod's nodeSelector is kept and agrees with Remote",
			pod: podWith(toVirtualNode, nil), spec: webhooktest.Offloading(offv1beta1.RemotePodOffloadingStrategy),
			tolerations: []corev1.Toleration{toleration},
			terms:       []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.IsVirtual)}},
		{name: "a requirement the pod already has is not repeated",
			pod: podWith(nil, nil, webhooktest.Term(webhooktest.IsVirtual)), spec: webhooktest.Offloading(offv1beta1.RemotePodOffloadingStrategy),
			tolerations: []corev1.Toleration{toleration},
			terms:       []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.IsVirtual)}},
		{name: "MatchFields are kept next to the expressions",
			pod:  podWith(nil, nil, corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{webhooktest.Req("metadata.name", corev1.NodeSelectorOpIn, "milan")}}),
			spec: webhooktest.Offloading(offv1beta1.RemotePodOffloadingStrategy), tolerations: []corev1.Toleration{toleration},
			terms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{webhooktest.IsVirtual},
				MatchFields: []corev1.NodeSelectorRequirement{webhooktest.Req("metadata.name", corev1.NodeSelectorOpIn, "milan")}}}},
		{name: "an empty selector term matches no cluster and stays empty",
			pod: podWith(nil, nil), spec: webhooktest.Offloading(offv1beta1.RemotePodOffloadingStrategy, corev1.NodeSelectorTerm{}, webhooktest.Term(webhooktest.South)),
			tolerations: []corev1.Toleration{toleration},
			terms:       []corev1.NodeSelectorTerm{{}, webhooktest.Term(webhooktest.South, webhooktest.IsVirtual)}},

		// Contradictions: admitted, mutated, and reported.
		{name: "nodeSelector for a virtual node in a Local namespace",
			pod: podWith(toVirtualNode, []corev1.Toleration{webhooktest.SeedToleration}), spec: webhooktest.Offloading(offv1beta1.LocalPodOffloadingStrategy),
			tolerations: []corev1.Toleration{webhooktest.SeedToleration},
			terms:       []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.NotVirtual)}, conflict: "Local"},
		{name: "affinity for a non-virtual node in a Remote namespace",
			pod: podWith(nil, nil, webhooktest.Term(webhooktest.NotVirtual)), spec: webhooktest.Offloading(offv1beta1.RemotePodOffloadingStrategy),
			tolerations: []corev1.Toleration{toleration},
			terms:       []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.NotVirtual, webhooktest.IsVirtual)}, conflict: "Remote"},
		{name: "DoesNotExist on the type label in a Remote namespace",
			pod:         podWith(nil, nil, webhooktest.Term(webhooktest.Req(consts.TypeLabel, corev1.NodeSelectorOpDoesNotExist))),
			spec:        webhooktest.Offloading(offv1beta1.RemotePodOffloadingStrategy),
			tolerations: []corev1.Toleration{toleration},
			terms:       []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.Req(consts.TypeLabel, corev1.NodeSelectorOpDoesNotExist), webhooktest.IsVirtual)}, conflict: "virtual nodes only"},
		{name: "a region the selector excludes, on a virtual node",
			pod:  podWith(map[string]string{consts.TypeLabel: consts.TypeVirtualNode, "topology.liqo.io/region": "center"}, nil),
			spec: webhooktest.Offloading(offv1beta1.LocalAndRemotePodOffloadingStrategy, webhooktest.Term(webhooktest.South)), tolerations: []corev1.Toleration{toleration},
			terms:    []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.NotVirtual), webhooktest.Term(webhooktest.South, webhooktest.IsVirtual)},
			conflict: "cluster selector"},
		{name: "one satisfiable pod term is enough",
			pod: podWith(nil, nil, webhooktest.Term(webhooktest.NotVirtual), webhooktest.Term(worker0)), spec: webhooktest.Offloading(offv1beta1.RemotePodOffloadingStrategy),
			tolerations: []corev1.Toleration{toleration},
			terms:       []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.NotVirtual, webhooktest.IsVirtual), webhooktest.Term(worker0, webhooktest.IsVirtual)}},
		{name: "a pod already unsatisfiable is not the strategy's conflict",
			pod:  podWith(nil, nil, webhooktest.Term(webhooktest.Req("a", corev1.NodeSelectorOpIn, "x"), webhooktest.Req("a", corev1.NodeSelectorOpNotIn, "x"))),
			spec: webhooktest.Offloading(offv1beta1.RemotePodOffloadingStrategy), tolerations: []corev1.Toleration{toleration},
			terms: []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.Req("a", corev1.NodeSelectorOpIn, "x"), webhooktest.Req("a", corev1.NodeSelectorOpNotIn, "x"), webhooktest.IsVirtual)}},
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
			if gotTerms := RequiredTerms(got); !equality.Semantic.DeepEqual(gotTerms, tt.terms) {
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
		{"In and NotIn of the same value", []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.Req("a", corev1.NodeSelectorOpIn, "x"), webhooktest.Req("a", corev1.NodeSelectorOpNotIn, "x"))}, nil, false},
		{"In and NotIn leaving a value", []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.Req("a", corev1.NodeSelectorOpIn, "x", "y"), webhooktest.Req("a", corev1.NodeSelectorOpNotIn, "x"))}, nil, true},
		{"disjoint In sets", []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.Req("a", corev1.NodeSelectorOpIn, "x"), webhooktest.Req("a", corev1.NodeSelectorOpIn, "y"))}, nil, false},
		{"nodeSelector against NotIn", []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.Req("a", corev1.NodeSelectorOpNotIn, "x"))}, map[string]string{"a": "x"}, false},
		{"nodeSelector against DoesNotExist", []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.Req("a", corev1.NodeSelectorOpDoesNotExist))}, map[string]string{"a": "x"}, false},
		{"Exists and DoesNotExist", []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.Req("a", corev1.NodeSelectorOpExists), webhooktest.Req("a", corev1.NodeSelectorOpDoesNotExist))}, nil, false},
		{"NotIn and DoesNotExist agree", []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.Req("a", corev1.NodeSelectorOpNotIn, "x"), webhooktest.Req("a", corev1.NodeSelectorOpDoesNotExist))}, nil, true},
		{"Gt and Lt with room", []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.Req("n", corev1.NodeSelectorOpGt, "1"), webhooktest.Req("n", corev1.NodeSelectorOpLt, "3"))}, nil, true},
		{"Gt and Lt without room", []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.Req("n", corev1.NodeSelectorOpGt, "1"), webhooktest.Req("n", corev1.NodeSelectorOpLt, "2"))}, nil, false},
		{"Gt against an In value", []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.Req("n", corev1.NodeSelectorOpGt, "5"), webhooktest.Req("n", corev1.NodeSelectorOpIn, "3", "7"))}, nil, true},
		{"Gt against a non-numeric In value", []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.Req("n", corev1.NodeSelectorOpGt, "5"), webhooktest.Req("n", corev1.NodeSelectorOpIn, "x"))}, nil, false},
		{"fields are separate from labels", []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{webhooktest.Req("metadata.name", corev1.NodeSelectorOpIn, "a")},
			MatchFields:      []corev1.NodeSelectorRequirement{webhooktest.Req("metadata.name", corev1.NodeSelectorOpNotIn, "a")}}}, nil, true},
		{"contradicting fields", []corev1.NodeSelectorTerm{{
			MatchFields: []corev1.NodeSelectorRequirement{webhooktest.Req("metadata.name", corev1.NodeSelectorOpIn, "a"), webhooktest.Req("metadata.name", corev1.NodeSelectorOpNotIn, "a")}}}, nil, false},
		{"one good term of two", []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.Req("a", corev1.NodeSelectorOpIn, "x")), webhooktest.Term(webhooktest.Req("a", corev1.NodeSelectorOpIn, "y"))}, map[string]string{"a": "y"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := satisfiable(tt.terms, tt.nodeSelector); got != tt.want {
				t.Errorf("satisfiable = %v, want %v", got, tt.want)
			}
		})
	}
}
