package peering

import (
	"context"
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
// 4. A pod asking for 3.5 CPUs, in a namespace offloaded to milan only,
// is never bound to the virtual node: it stays held on rome, saying that
// milan's largest free piece is 3 CPUs, and milan gets no ShadowPod; a
// half-CPU pod beside it runs on milan. Once milan frees a node, the held pod
// runs there.
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

	const ns = "fit-remote"
	twin := offloadWith(ctx, t, rome, ns, "--pod-offloading-strategy", "Remote", "--selector", "region=north-italy")
	t.Cleanup(func() {
		_, _ = run(context.Background(), "unoffload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"])
	})
	pod := func(name, cpu string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "c", Image: "busybox", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}
	}
	big, small := pod("big", "3500m"), pod("small", "500m")
	for _, p := range []*corev1.Pod{big, small} {
		if err := rome.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	waitEvent(ctx, t, ns, "big", gate.ReasonNoProviderFits)
	if err := rome.Get(ctx, client.ObjectKeyFromObject(big), big); err != nil {
		t.Fatal(err)
	}
	if msg := big.Annotations[consts.PlacementAnnotation]; big.Spec.NodeName != "" || !strings.Contains(msg, "milan: cpu=3") {
		t.Errorf("the 3.5-CPU pod is on %q, saying %q; want it held, naming milan's 3 CPUs", big.Spec.NodeName, msg)
	}
	if node := waitScheduled(ctx, t, rome, small); node != "milan" {
		t.Errorf("the half-CPU pod runs on %s, want milan", node)
	}
	waitOffloadedTo(ctx, t, rome, small, "milan")
	err := milan.Get(ctx, client.ObjectKey{Namespace: twin, Name: "big"}, &offv1beta1.ShadowPod{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("milan has a ShadowPod for the held pod: %v", err)
	}

	// milan frees a node: the held pod goes there.
	if err := milan.Delete(ctx, hogs[0]); err != nil {
		t.Fatal(err)
	}
	freed := time.Now()
	if node := waitScheduled(ctx, t, rome, big); node != "milan" {
		t.Errorf("the 3.5-CPU pod runs on %s, want milan", node)
	}
	waitOffloadedTo(ctx, t, rome, big, "milan")
	t.Logf("the held pod ran on milan %v after milan freed a node", time.Since(freed).Round(100*time.Millisecond))
}
