package main

import (
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/liqo-go/liqo/pkg/controllermanager/slices"
	"github.com/liqo-go/liqo/pkg/placement/fit"
)

// placementResult is the fit summary a provider of many nodes publishes:
// its size on the wire, its groups, and what making it costs the
// provider's manager (it is made again at most once a second, after any
// node or pod change).
type placementResult struct {
	nodes, pods, groups, omitted int
	bytes                        int
	make                         time.Duration
}

// benchPlacement summarizes a provider of nodes nodes of a few shapes
// (four instance types in three zones, a tenth tainted for GPUs), each
// with podsPerNode pods of varied requests: what the fit controller does
// on every refresh. No cluster: the summary is a pure function of the
// nodes and pods it is given.
func benchPlacement(nodes, podsPerNode int) placementResult {
	types := []struct{ name, cpu, memory string }{{"small", "4", "16Gi"}, {"medium", "8", "32Gi"}, {"large", "16", "64Gi"}, {"xlarge", "32", "128Gi"}}
	var ns []corev1.Node
	var pods []corev1.Pod
	for i := range nodes {
		t := types[i%len(types)]
		n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%d", i), Labels: map[string]string{
			corev1.LabelInstanceTypeStable: t.name, corev1.LabelTopologyZone: fmt.Sprintf("zone-%d", i%3), corev1.LabelArchStable: "amd64"}}}
		alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(t.cpu), corev1.ResourceMemory: resource.MustParse(t.memory),
			corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("100Gi")}
		n.Status.Allocatable, n.Status.Capacity = alloc, alloc
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		if i%10 == 0 {
			n.Spec.Taints = []corev1.Taint{{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule}}
		}
		ns = append(ns, n)
		for j := range podsPerNode {
			// 50m to 500m and 64Mi to 640Mi: every node ends with its own
			// free amounts, the summary's worst case.
			cpu := resource.NewMilliQuantity(int64(50*(1+(i+j)%10)), resource.DecimalSI)
			mem := resource.NewQuantity(int64(64<<20)*int64(1+(i*7+j)%10), resource.BinarySI)
			pods = append(pods, corev1.Pod{Spec: corev1.PodSpec{NodeName: n.Name, Containers: []corev1.Container{{Name: "c",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: *cpu, corev1.ResourceMemory: *mem}}}}},
				Status: corev1.PodStatus{Phase: corev1.PodRunning}})
		}
	}
	const rounds = 20
	start := time.Now()
	var s = fit.Summarize(slices.FitNodes(ns, pods, nil), metav1.Now())
	for range rounds - 1 {
		s = fit.Summarize(slices.FitNodes(ns, pods, nil), metav1.Now())
	}
	took := time.Since(start) / rounds
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // a FitSummary always encodes
	}
	return placementResult{nodes: nodes, pods: len(pods), groups: len(s.Groups), omitted: int(s.Omitted), bytes: len(b), make: took}
}

func printPlacement(r placementResult) {
	fmt.Fprintf(tables, "\nFit summary of a provider with %d nodes and %d pods (made at most once a second, after a node or pod change)\n", r.nodes, r.pods)
	fmt.Fprintf(tables, "  %d groups (%d nodes omitted), %d bytes of JSON in each accepted ResourceSlice; made in %s\n",
		r.groups, r.omitted, r.bytes, ms(r.make))
	record(measurement{Suite: "placement", Measure: "fit summary size", N: r.nodes, Unit: "bytes", Value: number(float64(r.bytes))})
	record(measurement{Suite: "placement", Measure: "fit summary, time to make", N: r.nodes, Unit: "s", Value: seconds(r.make)})
}
