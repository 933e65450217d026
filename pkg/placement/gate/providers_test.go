package gate

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/test/harness"
)

// publish writes provider's fit summary (its slice on this consumer).
func publish(ctx context.Context, t *testing.T, provider string, groups ...authv1beta1.NodeFit) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: consts.TenantNamespace(provider)}}
	if err := cl.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	s := &authv1beta1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: provider, Namespace: ns.Name},
		Spec: authv1beta1.ResourceSliceSpec{ProviderClusterID: ptr.To(corev1beta1.ClusterID(provider))}}
	if err := cl.Create(ctx, s); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if err := cl.Get(ctx, client.ObjectKeyFromObject(s), s); err != nil {
		t.Fatal(err)
	}
	var nodes int32
	for _, g := range groups {
		nodes += g.Count
	}
	s.Status.Fit = &authv1beta1.FitSummary{Groups: groups, Nodes: nodes, UpdateTime: metav1.Now()}
	if err := cl.Status().Update(ctx, s); err != nil {
		t.Fatal(err)
	}
}

func cpus(count int32, cpu string, taints ...corev1.Taint) authv1beta1.NodeFit {
	return authv1beta1.NodeFit{Count: count, Free: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu),
		corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("100")}, Taints: taints}
}

// heldPod is a pod of a Remote namespace as the webhook passes it on:
// held by the placement gate, required on virtual nodes.
func heldPod(ns, name, cpu string, tolerations ...corev1.Toleration) *corev1.Pod {
	onVirtual := corev1.NodeSelectorRequirement{Key: consts.TypeLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{consts.TypeVirtualNode}}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{consts.PlacementLabel: "pending"}},
		Spec: corev1.PodSpec{
			SchedulingGates: []corev1.PodSchedulingGate{{Name: consts.PlacementGate}},
			Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{onVirtual}}}}}},
			Tolerations: tolerations,
			Containers: []corev1.Container{{Name: "c", Image: "busybox",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}},
		},
	}
}

// create creates pods, deleted at the end of the test: a pod left bound
// would keep its reservation against the (static) summaries of the tests
// after.
func create(ctx context.Context, t *testing.T, pods ...*corev1.Pod) {
	t.Helper()
	for _, p := range pods {
		if err := cl.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := cl.Delete(context.Background(), p, client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
				t.Error(err)
			}
		})
	}
}

// waitBound waits until p is bound and returns its node.
func waitBound(ctx context.Context, t *testing.T, p *corev1.Pod) string {
	t.Helper()
	harness.Eventually(ctx, t, "pod "+p.Name+" bound", func() (bool, error) {
		err := cl.Get(ctx, client.ObjectKeyFromObject(p), p)
		return err == nil && p.Spec.NodeName != "", err
	})
	return p.Spec.NodeName
}

// waitHeld waits until p is held saying why, and returns what it says.
func waitHeld(ctx context.Context, t *testing.T, p *corev1.Pod) string {
	t.Helper()
	harness.Eventually(ctx, t, "pod "+p.Name+" held with a reason", func() (bool, error) {
		err := cl.Get(ctx, client.ObjectKeyFromObject(p), p)
		if err == nil && p.Spec.NodeName != "" {
			t.Fatalf("pod %s was bound to %s; want it held", p.Name, p.Spec.NodeName)
		}
		return err == nil && p.Annotations[consts.PlacementAnnotation] != "", err
	})
	return p.Annotations[consts.PlacementAnnotation]
}

// setUnschedulable cordons or uncordons node.
func setUnschedulable(ctx context.Context, t *testing.T, node string, cordoned bool) {
	t.Helper()
	var n corev1.Node
	if err := cl.Get(ctx, client.ObjectKey{Name: node}, &n); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(n.DeepCopy())
	n.Spec.Unschedulable = cordoned
	if err := cl.Patch(ctx, &n, patch); err != nil {
		t.Fatal(err)
	}
}

// TestTwoProviders: P has two nodes with 4 CPUs free, Q one with 8, and
// each a virtual node of 16 CPUs here: the pods go where one node of a
// provider has room, whatever the virtual nodes offer.
func TestTwoProviders(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	publish(ctx, t, providerP, cpus(2, "4"))
	publish(ctx, t, providerQ, cpus(1, "8"))
	const ns = "default"

	// A 6-CPU pod: on Q, never on P.
	six := heldPod(ns, "six", "6")
	create(ctx, t, six)
	start := time.Now()
	if node := waitBound(ctx, t, six); node != nodeQ {
		t.Errorf("the 6-CPU pod is on %s, want %s", node, nodeQ)
	}
	t.Logf("the 6-CPU pod was bound to Q's virtual node %v after its creation", time.Since(start).Round(10*time.Millisecond))
	if !strings.Contains(fmt.Sprint(six.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution), nodeP) {
		t.Errorf("the 6-CPU pod's affinity does not exclude %s: %v", nodeP, six.Spec.Affinity.NodeAffinity)
	}

	// Without Q: held, naming P's largest free piece.
	setUnschedulable(ctx, t, nodeQ, true)
	t.Cleanup(func() { setUnschedulable(context.Background(), t, nodeQ, false) })
	var bigs []*corev1.Pod
	for i := range 10 {
		bigs = append(bigs, heldPod(ns, fmt.Sprintf("big-%d", i), "6"))
	}
	create(ctx, t, bigs...)
	for _, p := range bigs {
		if msg := waitHeld(ctx, t, p); !strings.Contains(msg, providerP+": cpu=4") {
			t.Errorf("pod %s held saying %q; want it to name P's 4 CPUs", p.Name, msg)
		}
	}
	// Then a 2-CPU pod: on P, behind the ten held ones.
	two := heldPod(ns, "two", "2")
	create(ctx, t, two)
	start = time.Now()
	if node := waitBound(ctx, t, two); node != nodeP {
		t.Errorf("the 2-CPU pod is on %s, want %s", node, nodeP)
	}
	t.Logf("the 2-CPU pod was bound to P's virtual node %v after its creation, behind ten held pods", time.Since(start).Round(10*time.Millisecond))
}

// TestBurst: ten 3-CPU pods created at once against P alone, whose two
// nodes have 4 CPUs free: two go to P's virtual node (one per node), the
// other eight stay held, though the virtual node has room for five.
func TestBurst(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	publish(ctx, t, providerP, cpus(2, "4"))
	setUnschedulable(ctx, t, nodeQ, true)
	t.Cleanup(func() { setUnschedulable(context.Background(), t, nodeQ, false) })
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "burst"}}
	if err := cl.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	var pods []*corev1.Pod
	for i := range 10 {
		pods = append(pods, heldPod(ns.Name, fmt.Sprintf("burst-%d", i), "3"))
	}
	create(ctx, t, pods...)
	// Long enough for every pod to be placed once the way it will be.
	deadline := time.Now().Add(15 * time.Second)
	var bound, held int
	for time.Now().Before(deadline) {
		bound, held = 0, 0
		for _, p := range pods {
			if err := cl.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
				t.Fatal(err)
			}
			switch {
			case p.Spec.NodeName == nodeP:
				bound++
			case p.Spec.NodeName != "":
				t.Fatalf("pod %s bound to %s", p.Name, p.Spec.NodeName)
			case p.Annotations[consts.PlacementAnnotation] != "":
				held++
			}
		}
		if bound > 2 {
			t.Fatalf("%d pods bound to P's virtual node; P's nodes have room for two", bound)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if bound != 2 || held != 8 {
		t.Errorf("%d pods bound to P's virtual node and %d held; want 2 and 8", bound, held)
	}
}

// TestTaints: a pod that does not tolerate the taint of P's nodes is not
// bound to P; one that does is.
func TestTaints(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	gpu := corev1.Taint{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}
	publish(ctx, t, providerP, cpus(2, "4", gpu))
	setUnschedulable(ctx, t, nodeQ, true)
	t.Cleanup(func() { setUnschedulable(context.Background(), t, nodeQ, false) })
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "taints"}}
	if err := cl.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	plain := heldPod(ns.Name, "plain", "1")
	tolerant := heldPod(ns.Name, "tolerant", "1", corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoSchedule})
	create(ctx, t, plain, tolerant)
	if node := waitBound(ctx, t, tolerant); node != nodeP {
		t.Errorf("the tolerant pod is on %s, want %s", node, nodeP)
	}
	if msg := waitHeld(ctx, t, plain); !strings.Contains(msg, providerP) {
		t.Errorf("the intolerant pod held saying %q; want it to name P", msg)
	}
}
