package peering

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/forge"
	"github.com/liqo-go/liqo/test/harness"
)

// TestDaemonSetsStayOffVirtualNodes: a DaemonSet tolerating every taint,
// in an offloaded namespace of rome (two simulated nodes, the virtual node
// milan), counts only rome's own nodes: desired = ready = 2, no pod bound
// to milan, no ShadowPod there, and an image change rolls out to the end.
// A DaemonSet's pod bound to the virtual node anyway is refused at once,
// with its own reason and no ShadowPod.
func TestDaemonSetsStayOffVirtualNodes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	peer(t, "rome", "milan")
	rome, milan := clusterClient(t, "rome"), clusterClient(t, "milan")
	const ns = "agents"
	twin := offloadWith(ctx, t, rome, ns, "--pod-offloading-strategy", "LocalAndRemote")
	t.Cleanup(func() {
		_, _ = run(context.Background(), "unoffload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"])
	})

	labels := map[string]string{"app": "agent"}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: ns},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
				Containers:  []corev1.Container{{Name: "agent", Image: "busybox:1"}},
			}},
		},
	}
	if err := rome.Create(ctx, ds); err != nil {
		t.Fatal(err)
	}
	var local int32
	nodes, err := tb.Cluster("rome").Client().CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: consts.TypeLabel + "!=" + consts.TypeVirtualNode})
	if err != nil {
		t.Fatal(err)
	}
	local = int32(len(nodes.Items))
	rolledOut := func(image string) func() (bool, error) {
		return func() (bool, error) {
			var got appsv1.DaemonSet
			if err := rome.Get(ctx, client.ObjectKeyFromObject(ds), &got); err != nil {
				return false, err
			}
			s := got.Status
			return s.ObservedGeneration == got.Generation && got.Spec.Template.Spec.Containers[0].Image == image &&
				s.DesiredNumberScheduled == local && s.NumberReady == local && s.UpdatedNumberScheduled == local && s.NumberAvailable == local, nil
		}
	}
	start := time.Now()
	harness.Eventually(ctx, t, "the DaemonSet ready on rome's own nodes", rolledOut("busybox:1"))
	t.Logf("desired = ready = %d in %v", local, time.Since(start).Round(100*time.Millisecond))

	if err := rome.Get(ctx, client.ObjectKeyFromObject(ds), ds); err != nil {
		t.Fatal(err)
	}
	ds.Spec.Template.Spec.Containers[0].Image = "busybox:2"
	if err := rome.Update(ctx, ds); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(ctx, t, "the new image rolled out", rolledOut("busybox:2"))
	pods, err := tb.Cluster("rome").Client().CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName == "milan" {
			t.Errorf("pod %s of the DaemonSet is bound to the virtual node milan", p.Name)
		}
	}

	// A pod of the DaemonSet bound to milan by hand, as one made before the
	// webhook saw its DaemonSet would be.
	stray := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "agent-stray", Namespace: ns, OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.Name, UID: ds.UID, Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{NodeName: "milan", Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers: []corev1.Container{{Name: "agent", Image: "busybox:2"}}},
	}
	if err := rome.Create(ctx, stray); err != nil {
		t.Fatal(err)
	}
	waitEvent(ctx, t, ns, stray.Name, forge.ReasonDaemonSetPodRefused)
	err = milan.Get(ctx, client.ObjectKey{Namespace: twin, Name: stray.Name}, &offv1beta1.ShadowPod{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("a ShadowPod for the DaemonSet's stray pod on milan: %v", err)
	}
	var list offv1beta1.ShadowPodList
	if err := milan.List(ctx, &list, client.InNamespace(twin)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 0 {
		t.Errorf("%d ShadowPods in milan's twin of %s, want none", len(list.Items), ns)
	}
	if err := rome.Delete(ctx, ds); err != nil {
		t.Error(err)
	}
}
