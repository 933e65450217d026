package podplacement

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/liqo-go/liqo/pkg/consts"
)

// TestKeepOffVirtualNodes: a DaemonSet's pods require a node that is not
// virtual, ANDed into each of their own terms; an empty term (matching no
// node) stays empty; a second pass changes nothing.
func TestKeepOffVirtualNodes(t *testing.T) {
	zone := corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}
	named := corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n1"}}
	cases := []struct {
		name string
		own  []corev1.NodeSelectorTerm
		want []corev1.NodeSelectorTerm
	}{
		{"no affinity", nil, []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{notVirtualNode}}}},
		{"its own terms", []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{zone}}, {MatchFields: []corev1.NodeSelectorRequirement{named}}},
			[]corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{zone, notVirtualNode}},
				{MatchExpressions: []corev1.NodeSelectorRequirement{notVirtualNode}, MatchFields: []corev1.NodeSelectorRequirement{named}}}},
		{"an empty term", []corev1.NodeSelectorTerm{{}, {MatchExpressions: []corev1.NodeSelectorRequirement{zone}}},
			[]corev1.NodeSelectorTerm{{}, {MatchExpressions: []corev1.NodeSelectorRequirement{zone, notVirtualNode}}}},
	}
	for _, c := range cases {
		spec := &corev1.PodSpec{Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}
		if c.own != nil {
			setRequiredTermsOf(spec, c.own)
		}
		if !KeepOffVirtualNodes(spec) {
			t.Errorf("%s: reported unchanged", c.name)
		}
		if got := requiredTermsOf(spec); !equality.Semantic.DeepEqual(got, c.want) {
			t.Errorf("%s: terms %+v, want %+v", c.name, got, c.want)
		}
		if KeepOffVirtualNodes(spec) {
			t.Errorf("%s: a second pass changed the spec", c.name)
		}
	}
}

func TestDaemonSetOnVirtualNodes(t *testing.T) {
	ds := &appsv1.DaemonSet{}
	if DaemonSetOnVirtualNodes(ds) {
		t.Error("a DaemonSet without the annotation may go to virtual nodes")
	}
	ds.Annotations = map[string]string{consts.DaemonSetOnVirtualNodesAnnotation: "true"}
	if !DaemonSetOnVirtualNodes(ds) {
		t.Error("the annotation on the DaemonSet is not read")
	}
	ds = &appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{
		Annotations: map[string]string{consts.DaemonSetOnVirtualNodesAnnotation: "true"}}}}}
	if !DaemonSetOnVirtualNodes(ds) {
		t.Error("the annotation on the pod template is not read")
	}
}
