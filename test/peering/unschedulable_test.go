package peering

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/placement/gate"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/forge"
	"github.com/liqo-go/liqo/test/harness"
)

// TestDrainedProviderNode: a Deployment's 3-CPU pod runs on milan's
// worker-0 while worker-1 has 2 CPUs free. worker-0 is drained (cordoned,
// the pod evicted): milan's new pod for it is unschedulable. The local pod
// says RemoteUnschedulable at once and fails after the time limit
// (testUnschedulableTimeout), its ShadowPod deleted; the Deployment's new
// pod is held, since no node of milan has room; once worker-0 takes pods
// again, it runs there.
func TestDrainedProviderNode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	peer(t, "rome", "milan")
	rome, milan := clusterClient(t, "rome"), clusterClient(t, "milan")
	milanCS := tb.Cluster("milan").Client()

	hog := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "drain-hog", Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: "worker-1", Containers: []corev1.Container{{Name: "c", Image: "busybox",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("6")}}}}},
	}
	if err := milan.Create(ctx, hog); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = milan.Delete(context.Background(), hog) })
	uncordon := func() {
		patch := []byte(`{"spec":{"unschedulable":null}}`)
		if _, err := milanCS.CoreV1().Nodes().Patch(context.Background(), "worker-0", "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(uncordon)

	const ns = "drained"
	twin := offloadWith(ctx, t, rome, ns, "--pod-offloading-strategy", "Remote", "--selector", "region=north-italy")
	t.Cleanup(func() {
		_, _ = run(context.Background(), "unoffload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"])
	})
	labels := map[string]string{"app": "drained"}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "drained", Namespace: ns},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "c", Image: "busybox",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3")}}}}}}},
	}
	if err := rome.Create(ctx, deploy); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Its pods must not keep the virtual node's CPUs from the tests after.
		_ = rome.Delete(context.Background(), deploy, client.PropagationPolicy(metav1.DeletePropagationForeground))
		_ = rome.DeleteAllOf(context.Background(), &corev1.Pod{}, client.InNamespace(ns))
	})
	first := onlyPod(ctx, t, rome, ns, labels, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	var remote corev1.Pod
	if err := milan.Get(ctx, client.ObjectKey{Namespace: twin, Name: first.Name}, &remote); err != nil {
		t.Fatal(err)
	}
	if remote.Spec.NodeName != "worker-0" {
		t.Fatalf("the pod runs on milan's %s, want worker-0 (worker-1 has 2 CPUs free)", remote.Spec.NodeName)
	}

	// Drain worker-0.
	if _, err := milanCS.CoreV1().Nodes().Patch(ctx, "worker-0", "application/merge-patch+json",
		[]byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := milanCS.PolicyV1().Evictions(twin).Evict(ctx, &policyv1.Eviction{
		ObjectMeta: metav1.ObjectMeta{Name: remote.Name, Namespace: twin}}); err != nil {
		t.Fatal(err)
	}
	drained := time.Now()
	harness.Eventually(ctx, t, "the local pod saying that milan cannot run it", func() (bool, error) {
		err := rome.Get(ctx, client.ObjectKeyFromObject(first), first)
		return err == nil && first.Status.Reason == forge.ReasonRemoteUnschedulable && first.Status.Phase == corev1.PodPending, err
	})
	t.Logf("%s: %s", first.Name, first.Status.Message)
	harness.Eventually(ctx, t, "the local pod Failed", func() (bool, error) {
		err := rome.Get(ctx, client.ObjectKeyFromObject(first), first)
		return err == nil && first.Status.Phase == corev1.PodFailed, err
	})
	failedAfter := time.Since(drained)
	if first.Status.Reason != forge.ReasonRemoteUnschedulable {
		t.Errorf("the pod failed with reason %q, want %s", first.Status.Reason, forge.ReasonRemoteUnschedulable)
	}
	if failedAfter < testUnschedulableTimeout-time.Second { // the provider's condition times are whole seconds
		t.Errorf("the pod failed %v after the drain, before the time limit %v", failedAfter, testUnschedulableTimeout)
	}
	t.Logf("the pod failed %v after the drain (limit %v): %s", failedAfter.Round(100*time.Millisecond), testUnschedulableTimeout, first.Status.Message)
	harness.Eventually(ctx, t, "its ShadowPod gone from milan", func() (bool, error) {
		err := milan.Get(ctx, client.ObjectKey{Namespace: twin, Name: first.Name}, &offv1beta1.ShadowPod{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})

	// The Deployment's new pod: held, no node of milan has room.
	second := onlyPod(ctx, t, rome, ns, labels, func(p *corev1.Pod) bool {
		return p.UID != first.UID && p.Annotations[consts.PlacementAnnotation] != ""
	})
	if second.Spec.NodeName != "" {
		t.Errorf("the new pod is bound to %s; want it held", second.Spec.NodeName)
	}
	waitEvent(ctx, t, ns, second.Name, gate.ReasonNoProviderFits)

	uncordon()
	back := time.Now()
	waitOffloadedTo(ctx, t, rome, second, "milan")
	t.Logf("the new pod ran on milan %v after worker-0 took pods again", time.Since(back).Round(100*time.Millisecond))
}

// onlyPod waits for a pod of ns with labels, other than a failed one, for
// which ok holds, and returns it.
func onlyPod(ctx context.Context, t *testing.T, c client.Client, ns string, labels map[string]string, ok func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var found *corev1.Pod
	harness.Eventually(ctx, t, "a pod of "+ns, func() (bool, error) {
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels(labels)); err != nil {
			return false, err
		}
		var seen []string
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.Status.Phase != corev1.PodFailed && ok(p) {
				found = p
				return true, nil
			}
			seen = append(seen, fmt.Sprintf("%s on %q: %s %s %s %v", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.Reason, p.Status.Message, p.Annotations[consts.PlacementAnnotation]))
		}
		return false, fmt.Errorf("pods: %v", seen)
	})
	return found
}
