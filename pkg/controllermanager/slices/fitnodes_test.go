package slices

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/liqo-go/liqo/pkg/consts"
)

// TestFitNodes: what each node may still take, counting only the nodes
// consumers' pods may run on (Ready, schedulable, not virtual, matching the
// provider's offloaded-pod node selector) and only the pods that have not
// ended; published labels only.
func TestFitNodes(t *testing.T) {
	node := func(name string, labels map[string]string, edit func(*corev1.Node)) corev1.Node {
		n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
		n.Status.Allocatable = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourcePods: resource.MustParse("10")}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		if edit != nil {
			edit(&n)
		}
		return n
	}
	pool := map[string]string{"pool": "offload", corev1.LabelTopologyZone: "a", "secret/rack": "r1"}
	nodes := []corev1.Node{
		node("fits", pool, nil),
		node("other-pool", map[string]string{"pool": "system"}, nil),
		node("cordoned", pool, func(n *corev1.Node) { n.Spec.Unschedulable = true }),
		node("not-ready", pool, func(n *corev1.Node) { n.Status.Conditions[0].Status = corev1.ConditionFalse }),
		node("virtual", map[string]string{"pool": "offload", consts.TypeLabel: consts.TypeVirtualNode}, nil),
	}
	pod := func(nodeName, cpu string, phase corev1.PodPhase) corev1.Pod {
		return corev1.Pod{Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "c",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}},
			Status: corev1.PodStatus{Phase: phase}}
	}
	pods := []corev1.Pod{pod("fits", "3", corev1.PodRunning), pod("fits", "4", corev1.PodSucceeded), pod("fits", "1", corev1.PodPending), pod("", "2", corev1.PodPending)}

	got := FitNodes(nodes, pods, map[string]string{"pool": "offload"})
	if len(got) != 1 {
		t.Fatalf("FitNodes = %d nodes, want the one Ready, schedulable, real node of the pool: %+v", len(got), got)
	}
	if cpu, pods := got[0].Free[corev1.ResourceCPU], got[0].Free[corev1.ResourcePods]; cpu.Cmp(resource.MustParse("4")) != 0 || pods.Value() != 8 {
		t.Errorf("free = cpu %s, pods %s; want 4 and 8 (the ended pod and the unbound one not counted)", cpu.String(), pods.String())
	}
	if _, ok := got[0].Labels["secret/rack"]; ok || got[0].Labels[corev1.LabelTopologyZone] != "a" {
		t.Errorf("labels = %v; want only the published ones", got[0].Labels)
	}
	if all := FitNodes(nodes, pods, nil); len(all) != 2 {
		t.Errorf("without a selector, %d nodes; want 2 (both pools)", len(all))
	}
}
