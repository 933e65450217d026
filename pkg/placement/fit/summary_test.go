package fit

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
)

func free(cpu, mem string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem),
		corev1.ResourcePods: resource.MustParse("100")}
}

// TestSummarizeGroups: alike nodes are one group, the largest first; the
// free resources are rounded down, never up.
func TestSummarizeGroups(t *testing.T) {
	gpu := corev1.Taint{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule}
	s := Summarize([]Node{
		{Free: free("4", "8Gi")},
		{Free: free("4050m", "8Gi")},
		{Free: free("8", "16Gi"), Taints: []corev1.Taint{gpu}},
		{Free: free("-1", "1Gi")},
	}, metav1.Now())
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if s.Nodes != 4 || len(s.Groups) != 3 || s.Omitted != 0 {
		t.Fatalf("summary %+v", s)
	}
	first, second, last := s.Groups[0], s.Groups[1], s.Groups[2]
	if first.Free.Cpu().String() != "8" || len(first.Taints) != 1 || second.Count != 2 || second.Free.Cpu().String() != "4" {
		t.Errorf("groups %+v", s.Groups)
	}
	if !last.Free.Cpu().IsZero() {
		t.Errorf("an overcommitted node has %s free", last.Free.Cpu())
	}
	if got := s.Largest(); got.Cpu().String() != "8" {
		t.Errorf("largest %v", got)
	}
}

// TestSummarizeThousandNodes: a thousand nodes of varied use fit in at
// most MaxFitGroups groups, of a size a status can carry; every node is in
// a group or counted as omitted, and no group says more than its nodes
// have.
func TestSummarizeThousandNodes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	nodes := make([]Node, 1000)
	for i := range nodes {
		nodes[i] = Node{
			Free:   free(fmt.Sprintf("%dm", r.IntN(16000)), fmt.Sprintf("%dMi", r.IntN(64<<10))),
			Labels: map[string]string{"topology.kubernetes.io/zone": fmt.Sprintf("z%d", i%3)},
		}
	}
	s := Summarize(nodes, metav1.Now())
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	var in int32
	for _, g := range s.Groups {
		in += g.Count
	}
	if len(s.Groups) > authv1beta1.MaxFitGroups || in+s.Omitted != 1000 || s.Omitted != 0 {
		t.Fatalf("%d groups, %d nodes in them, %d omitted", len(s.Groups), in, s.Omitted)
	}
	data, _ := json.Marshal(s)
	t.Logf("1,000 nodes: %d groups, %d omitted, %d bytes", len(s.Groups), s.Omitted, len(data))
	if len(data) > 32<<10 {
		t.Errorf("the summary of 1,000 nodes is %d bytes", len(data))
	}
	// Never overstated: each group has at least Count nodes of its
	// labels with at least its Free of every resource.
	for i, g := range s.Groups {
		n := int32(0)
		for _, node := range nodes {
			if node.Labels["topology.kubernetes.io/zone"] == g.Labels["topology.kubernetes.io/zone"] && covers(node.Free, g.Free) {
				n++
			}
		}
		if n < g.Count {
			t.Errorf("group %d says %d nodes have %v free; %d have", i, g.Count, g.Free, n)
		}
	}
}

// FuzzValidate: whatever a provider sends as a summary, Validate does not
// panic, and a summary it accepts is bounded.
func FuzzValidate(f *testing.F) {
	good, _ := json.Marshal(Summarize([]Node{{Free: free("4", "8Gi")}}, metav1.Now()))
	f.Add(good)
	f.Add([]byte(`{"groups":[{"count":-1,"free":{"cpu":"-4"}}],"nodes":1}`))
	f.Add([]byte(`{"groups":[{"count":5,"free":{"cpu":"4"}}],"nodes":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s authv1beta1.FitSummary
		if json.Unmarshal(data, &s) != nil || s.Validate() != nil {
			return
		}
		var in int64
		for _, g := range s.Groups {
			in += int64(g.Count)
			for name, q := range g.Free {
				if q.Sign() < 0 {
					t.Fatalf("accepted negative %s", name)
				}
			}
		}
		if len(s.Groups) > authv1beta1.MaxFitGroups || in > int64(s.Nodes) {
			t.Fatalf("accepted %d groups, %d nodes in them of %d", len(s.Groups), in, s.Nodes)
		}
	})
}

// TestReserve: two nodes of 4 free CPUs take one 3-CPU pod each, not a
// third; the group's other nodes are untouched.
func TestReserve(t *testing.T) {
	s := Summarize([]Node{{Free: free("4", "8Gi")}, {Free: free("4", "8Gi")}}, metav1.Now())
	three := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}
	if !Fits(Reserve(&s, []corev1.ResourceList{three}), three, nil) {
		t.Error("a second 3-CPU pod does not fit beside the first")
	}
	if Fits(Reserve(&s, []corev1.ResourceList{three, three}), three, nil) {
		t.Error("a third 3-CPU pod fits on two 4-CPU nodes")
	}
	one := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	if !Fits(Reserve(&s, []corev1.ResourceList{three, three}), one, nil) {
		t.Error("a 1-CPU pod does not fit beside two 3-CPU pods on two 4-CPU nodes")
	}
	many := Summarize([]Node{{Free: free("4", "8Gi")}, {Free: free("4", "8Gi")}, {Free: free("4", "8Gi")}}, metav1.Now())
	r := Reserve(&many, []corev1.ResourceList{three})
	var nodes int32
	for _, g := range r.Groups {
		nodes += g.Count
	}
	if nodes != 3 || r.Validate() != nil {
		t.Errorf("reserving on a group of 3: %+v", r.Groups)
	}
}
