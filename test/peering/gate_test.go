package peering

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
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/placement/gate"
	"github.com/liqo-go/liqo/test/harness"
)

// TestPlacementTellsTheTruth: milan's two nodes each have 3 CPUs free (its
// own pods hold 5 of 8), while its virtual node on rome offers the slice's
// 4. In a namespace offloaded to milan only:
//   - five 2-CPU pods created at once: two are bound to the virtual node
//     (one per node of milan) and run there, never unschedulable on milan;
//     the other three stay held;
//   - then ten 3.5-CPU pods are never bound to the virtual node: they stay
//     held on rome, saying that milan's largest free piece is 3 CPUs, and
//     milan gets no ShadowPod; a half-CPU pod created after them runs on
//     milan. Once milan frees a node, one of them runs there.
func TestPlacementTellsTheTruth(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	peer(t, "rome", "milan")
	rome, milan := clusterClient(t, "rome"), clusterClient(t, "milan")

	var hogs []*corev1.Pod
	for _, node := range []string{"worker-0", "worker-1"} {
		hog := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "hog-" + node, Namespace: "default"},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "busybox",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("5")}}}}},
		}
		if err := milan.Create(ctx, hog); err != nil {
			t.Fatal(err)
		}
		hogs = append(hogs, hog)
		t.Cleanup(func() { _ = milan.Delete(context.Background(), hog) })
	}
	milanFreesThree(ctx, t, rome)

	const ns = "fit-remote"
	twin := offloadWith(ctx, t, rome, ns, "--pod-offloading-strategy", "Remote", "--selector", "region=north-italy")
	t.Cleanup(func() {
		_, _ = run(context.Background(), "unoffload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"])
	})
	t.Cleanup(func() {
		// Held pods left behind would be let through to milan's virtual
		// node once the hogs go, and keep its CPUs from the tests after.
		_ = rome.DeleteAllOf(context.Background(), &corev1.Pod{}, client.InNamespace(ns))
	})
	pod := func(name, cpu string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}
	}
	burst(ctx, t, rome, milan, ns, twin, pod)
	// The burst's remote pods go after the local ones: the ten pods below
	// are judged on milan's summary once it counts them gone.
	milanFreesThree(ctx, t, rome)

	var bigs []*corev1.Pod
	for i := range 10 {
		big := pod(fmt.Sprintf("big-%d", i), "3500m")
		if err := rome.Create(ctx, big); err != nil {
			t.Fatal(err)
		}
		bigs = append(bigs, big)
	}
	small := pod("small", "500m")
	if err := rome.Create(ctx, small); err != nil {
		t.Fatal(err)
	}
	created := time.Now()
	if node := waitScheduled(ctx, t, rome, small); node != "milan" {
		t.Errorf("the half-CPU pod runs on %s, want milan", node)
	}
	waitOffloadedTo(ctx, t, rome, small, "milan")
	t.Logf("the half-CPU pod ran on milan %v after its creation, behind ten pods that fit nowhere", time.Since(created).Round(100*time.Millisecond))
	for _, big := range bigs {
		waitEvent(ctx, t, ns, big.Name, gate.ReasonNoProviderFits)
		if err := rome.Get(ctx, client.ObjectKeyFromObject(big), big); err != nil {
			t.Fatal(err)
		}
		if msg := big.Annotations[consts.PlacementAnnotation]; big.Spec.NodeName != "" || !strings.Contains(msg, "milan: cpu=3") {
			t.Errorf("the 3.5-CPU pod %s is on %q, saying %q; want it held, naming milan's 3 CPUs", big.Name, big.Spec.NodeName, msg)
		}
		err := milan.Get(ctx, client.ObjectKey{Namespace: twin, Name: big.Name}, &offv1beta1.ShadowPod{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("milan has a ShadowPod for the held pod %s: %v", big.Name, err)
		}
	}

	// milan frees a node: one of the held pods goes there (the virtual
	// node has room for one).
	if err := milan.Delete(ctx, hogs[0]); err != nil {
		t.Fatal(err)
	}
	freed := time.Now()
	var ran *corev1.Pod
	harness.Eventually(ctx, t, "a 3.5-CPU pod Running", func() (bool, error) {
		for _, big := range bigs {
			if err := rome.Get(ctx, client.ObjectKeyFromObject(big), big); err != nil {
				return false, err
			}
			if big.Status.Phase == corev1.PodRunning {
				ran = big
				return true, nil
			}
		}
		return false, nil
	})
	waitOffloadedTo(ctx, t, rome, ran, "milan")
	t.Logf("held pod %s ran on milan %v after milan freed a node", ran.Name, time.Since(freed).Round(100*time.Millisecond))
}

// milanFreesThree waits until rome reads, in milan's fit summary, that
// milan's largest free piece is 3 CPUs (each node's 8 less its hog's 5).
func milanFreesThree(ctx context.Context, t *testing.T, rome client.Client) {
	t.Helper()
	sliceKey := types.NamespacedName{Namespace: consts.TenantNamespace("milan"), Name: "milan"}
	harness.Eventually(ctx, t, "rome to read that milan's largest free piece is 3 CPUs", func() (bool, error) {
		var s authv1beta1.ResourceSlice
		if err := rome.Get(ctx, sliceKey, &s); err != nil {
			return false, err
		}
		if s.Status.Fit == nil {
			return false, nil
		}
		largest := s.Status.Fit.Largest()
		return largest.Cpu().Cmp(resource.MustParse("3")) == 0, nil
	})
}

// burst creates five 2-CPU pods at once in ns, offloaded to milan only,
// whose two nodes have 3 CPUs free each: the placement lets through one
// per node, the other three stay held; the two run on milan, where the
// scheduler never finds them unschedulable. The five are deleted at the
// end.
func burst(ctx context.Context, t *testing.T, rome, milan client.Client, ns, twin string, pod func(name, cpu string) *corev1.Pod) {
	t.Helper()
	var pods []*corev1.Pod
	for i := range 5 {
		p := pod(fmt.Sprintf("burst-%d", i), "2")
		if err := rome.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		pods = append(pods, p)
	}
	created := time.Now()
	running := 0
	harness.Eventually(ctx, t, "two of the burst's pods Running on milan, three held", func() (bool, error) {
		bound, held := 0, 0
		running = 0
		for _, p := range pods {
			if err := rome.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
				return false, err
			}
			switch {
			case p.Spec.NodeName == "milan":
				bound++
				if p.Status.Phase == corev1.PodRunning {
					running++
				}
			case p.Labels[consts.PlacementLabel] == "pending" && p.Annotations[consts.PlacementAnnotation] != "":
				held++
			}
			var remote corev1.Pod
			err := milan.Get(ctx, client.ObjectKey{Namespace: twin, Name: p.Name}, &remote)
			if err != nil && !apierrors.IsNotFound(err) {
				return false, err
			}
			for _, c := range remote.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
					t.Fatalf("pod %s unschedulable on milan: %s", p.Name, c.Message)
				}
			}
		}
		if bound > 2 {
			t.Fatalf("%d of the burst's pods bound to milan's virtual node; its nodes have room for two", bound)
		}
		return running == 2 && held == 3, nil
	})
	t.Logf("two of five 2-CPU pods created at once ran on milan %v after their creation, three held", time.Since(created).Round(100*time.Millisecond))
	for _, p := range pods {
		if err := rome.Delete(ctx, p); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	harness.Eventually(ctx, t, "the burst's pods gone", func() (bool, error) {
		for _, p := range pods {
			err := rome.Get(ctx, client.ObjectKeyFromObject(p), &corev1.Pod{})
			if !apierrors.IsNotFound(err) {
				return false, client.IgnoreNotFound(err)
			}
		}
		return true, nil
	})
}
