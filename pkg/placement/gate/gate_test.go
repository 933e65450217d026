package gate

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// TestExclude: the nodes named are excluded from every term of the pod's
// required affinity, the others still match as before.
func TestExclude(t *testing.T) {
	zone := corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}
	node := func(name, z string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"zone": z}}}
	}
	for _, own := range [][]corev1.NodeSelectorTerm{nil, {{MatchExpressions: []corev1.NodeSelectorRequirement{zone}}}} {
		pod := &corev1.Pod{}
		if own != nil {
			pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: own}}}
		}
		Exclude(&pod.Spec, []string{"milan"})
		required := nodeaffinity.GetRequiredNodeAffinity(pod)
		for _, c := range []struct {
			node *corev1.Node
			want bool
		}{{node("milan", "a"), false}, {node("naples", "a"), true}, {node("rome", "b"), own == nil}} {
			if got, _ := required.Match(c.node); got != c.want {
				t.Errorf("own terms %v: node %s matches %v, want %v", own, c.node.Name, got, c.want)
			}
		}
	}
}
