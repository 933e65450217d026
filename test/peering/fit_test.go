package peering

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/test/harness"
)

// TestFitSummary: the provider publishes in the consumer's ResourceSlice
// what each of its nodes can still take, and the consumer's copy follows
// the provider's own pods within seconds: a 1-CPU pod bound to one of
// milan's nodes takes 1 CPU off the summary rome reads.
func TestFitSummary(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	peer(t, "rome", "milan")
	rome, milan := clusterClient(t, "rome"), clusterClient(t, "milan")
	key := types.NamespacedName{Namespace: consts.TenantNamespace("milan"), Name: "milan"}

	var nodes corev1.NodeList
	if err := milan.List(ctx, &nodes); err != nil {
		t.Fatal(err)
	}
	var schedulable []corev1.Node
	for _, n := range nodes.Items {
		if n.Labels[consts.TypeLabel] != consts.TypeVirtualNode && !n.Spec.Unschedulable {
			schedulable = append(schedulable, n)
		}
	}
	var before authv1beta1.FitSummary
	harness.Eventually(ctx, t, "the fit summary of milan's nodes on rome's slice", func() (bool, error) {
		var s authv1beta1.ResourceSlice
		if err := rome.Get(ctx, key, &s); err != nil {
			return false, err
		}
		if s.Status.Fit == nil || int(s.Status.Fit.Nodes) != len(schedulable) {
			return false, nil
		}
		before = *s.Status.Fit
		return true, nil
	})
	if err := before.Validate(); err != nil {
		t.Fatalf("the summary rome got: %v", err)
	}
	for _, g := range before.Groups {
		if g.Free.Cpu().Cmp(*schedulable[0].Status.Allocatable.Cpu()) > 0 {
			t.Errorf("a group has %s CPU free, more than a node's allocatable %s", g.Free.Cpu(), schedulable[0].Status.Allocatable.Cpu())
		}
	}

	// One of milan's own pods, 1 CPU, on its first node.
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "fit-summary", Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: schedulable[0].Name, Containers: []corev1.Container{{Name: "c", Image: "busybox",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}},
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}},
	}
	if err := milan.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = milan.Delete(context.Background(), pod) })
	created := time.Now()
	want := totalCPU(&before) - 1000
	harness.Eventually(ctx, t, "the summary on rome to lose the pod's CPU", func() (bool, error) {
		var s authv1beta1.ResourceSlice
		if err := rome.Get(ctx, key, &s); err != nil {
			return false, err
		}
		return s.Status.Fit != nil && totalCPU(s.Status.Fit) == want, nil
	})
	t.Logf("rome's summary followed milan's pod in %v", time.Since(created).Round(10*time.Millisecond))
}

// totalCPU is the CPU free in a summary's groups, in millicores.
func totalCPU(s *authv1beta1.FitSummary) int64 {
	var total int64
	for _, g := range s.Groups {
		total += int64(g.Count) * g.Free.Cpu().MilliValue()
	}
	return total
}
