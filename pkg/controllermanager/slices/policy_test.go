package slices

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/liqo-go/liqo/pkg/consts"
)

func rl(cpu, mem, pods string) corev1.ResourceList {
	l := corev1.ResourceList{}
	if cpu != "" {
		l[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		l[corev1.ResourceMemory] = resource.MustParse(mem)
	}
	if pods != "" {
		l[corev1.ResourcePods] = resource.MustParse(pods)
	}
	return l
}

func node(name string, ready bool, virtual bool, alloc corev1.ResourceList) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	if virtual {
		n.Labels[consts.TypeLabel] = consts.TypeVirtualNode
	}
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}}
	n.Status.Allocatable = alloc
	return n
}

func TestShareable(t *testing.T) {
	nodes := []corev1.Node{
		node("a", true, false, rl("8", "32Gi", "110")),
		node("b", true, false, rl("8", "32Gi", "110")),
		node("down", false, false, rl("8", "32Gi", "110")),
		node("virtual", true, true, rl("100", "100Gi", "1000")),
	}
	cases := []struct {
		name    string
		pct     int
		granted []corev1.ResourceList
		want    corev1.ResourceList
	}{
		{"half of the ready physical nodes", 50, nil, rl("8", "32Gi", "110")},
		{"all of them", 100, nil, rl("16", "64Gi", "220")},
		{"odd share rounds down", 33, nil, rl("5280m", "22677427322", "72")},
		{"less what others got", 50, []corev1.ResourceList{rl("3", "8Gi", "10")}, rl("5", "24Gi", "100")},
		{"never negative", 50, []corev1.ResourceList{rl("20", "", "")}, rl("0", "32Gi", "110")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Shareable(nodes, c.pct, c.granted)
			if Canonical(got) != Canonical(c.want) {
				t.Fatalf("got %s, want %s", Canonical(got), Canonical(c.want))
			}
		})
	}
}

func TestDecide(t *testing.T) {
	left := rl("8", "32Gi", "110")
	cases := []struct {
		name      string
		requested corev1.ResourceList
		deny      bool
		wantOK    bool
		want      corev1.ResourceList
		msgHas    string
	}{
		{"fits", rl("4", "8Gi", "110"), false, true, rl("4", "8Gi", "110"), "all requested"},
		{"clamped", rl("16", "8Gi", "110"), false, true, rl("8", "8Gi", "110"), "cpu: requested 16, 8 left"},
		{"denied", rl("16", "8Gi", "110"), true, false, nil, "not enough resources: cpu: requested 16, 8 left"},
		{"fits under deny", rl("8", "32Gi", "1"), true, true, rl("8", "32Gi", "1"), "all requested"},
		{"unknown resource clamped to zero", corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}, false, true,
			corev1.ResourceList{"nvidia.com/gpu": resource.Quantity{}}, "nvidia.com/gpu: requested 1, 0 left"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok, msg := Decide(c.requested, left, c.deny)
			if ok != c.wantOK || Canonical(got) != Canonical(c.want) || !strings.Contains(msg, c.msgHas) {
				t.Fatalf("got %s ok=%v %q; want %s ok=%v containing %q", Canonical(got), ok, msg, Canonical(c.want), c.wantOK, c.msgHas)
			}
		})
	}
}
