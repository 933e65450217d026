package install

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/test/harness"
	"github.com/liqo-go/liqo/test/realpods"
)

const haPods = 200

// TestHAFailover: rome installed with --enable-ha offloads a Deployment of
// 200 pods to milan; the active controller manager's pod is deleted
// mid-offload. The other replica takes over: exactly 200 pods run on milan,
// none twice, and pod creations in the offloaded namespace (which the
// webhook admits) keep succeeding throughout.
func TestHAFailover(t *testing.T) {
	ctx := realpods.Timeout(t, 20*time.Minute)
	if out, err := install(ctx, rome, "--enable-ha"); err != nil {
		t.Fatalf("install --enable-ha on rome: %v\n%s", err, out)
	}
	if out, err := install(ctx, milan, "--set", "offloading.nodeSelector."+simPoolLabel+"=sim"); err != nil {
		t.Fatalf("install on milan: %v\n%s", err, out)
	}
	t.Cleanup(func() { cleanup(t, "ha-") })
	managers, err := rome.Client().CoreV1().Pods(consts.DefaultNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=liqo-controller-manager"})
	if err != nil || len(managers.Items) != 2 {
		t.Fatalf("rome's controller managers: %v, %v; want 2 with --enable-ha", podSummary(managers), err)
	}
	if out, err := run(ctx, "peer", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs["milan"],
		// The default slice (110 pods) would not hold them all.
		"--networking-disabled", "--pods", "300", "--timeout", "5m"); err != nil {
		t.Fatalf("peer: %v\n%s", err, out)
	}
	ns := realpods.Namespace(ctx, t, rome, "ha")
	if out, err := run(ctx, "offload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"], "--pod-offloading-strategy", "Remote", "--timeout", "2m"); err != nil {
		t.Fatalf("offload: %v\n%s", err, out)
	}
	twin := ns + "-rome"

	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "many", Namespace: ns}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](haPods),
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "many"}},
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "many"}},
			Spec: corev1.PodSpec{
				Tolerations: []corev1.Toleration{{Key: simulatedTaint.Key, Operator: corev1.TolerationOpEqual, Value: simulatedTaint.Value,
					Effect: simulatedTaint.Effect}},
				Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			},
		},
	}}
	if _, err := rome.Client().AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	remotePods := func() ([]corev1.Pod, error) {
		l, err := milan.Client().CoreV1().Pods(twin).List(ctx, metav1.ListOptions{LabelSelector: "app=many"})
		if err != nil {
			return nil, err
		}
		return l.Items, nil
	}
	harness.Eventually(ctx, t, "a fifth of the pods offloaded", func() (bool, error) {
		pods, err := remotePods()
		return len(pods) >= haPods/5, err
	})

	// Pod creations in the offloaded namespace, each admitted by the pod
	// webhook, from just before the failover to well after it. The pods
	// ask for a node no cluster has: they stay Pending, offloaded nowhere.
	var created, refused atomic.Int32
	var firstRefusal atomic.Value
	probeCtx, stopProbes := context.WithCancel(ctx)
	probesDone := make(chan struct{})
	go func() {
		defer close(probesDone)
		for i := 0; probeCtx.Err() == nil; i++ {
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("probe-%d", i), Namespace: ns, Labels: map[string]string{"app": "probe"}},
				Spec: corev1.PodSpec{NodeSelector: map[string]string{"liqo.io/test": "nowhere"}, Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}
			_, err := rome.Client().CoreV1().Pods(ns).Create(probeCtx, p, metav1.CreateOptions{})
			switch {
			case err == nil:
				created.Add(1)
				_ = rome.Client().CoreV1().Pods(ns).Delete(probeCtx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
			case probeCtx.Err() == nil:
				refused.Add(1)
				firstRefusal.CompareAndSwap(nil, err.Error())
			}
			select {
			case <-probeCtx.Done():
			case <-time.After(300 * time.Millisecond):
			}
		}
	}()

	leader := leaderPod(ctx, t)
	if err := rome.Client().CoreV1().Pods(consts.DefaultNamespace).Delete(ctx, leader, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("deleted the active controller manager %s", leader)
	harness.Eventually(ctx, t, "another replica leading", func() (bool, error) {
		l := leaderPod(ctx, t)
		return l != "" && l != leader, nil
	})

	realpods.RunningPods(ctx, t, rome, ns, "app=many", haPods)
	time.Sleep(5 * time.Second) // a duplicate would be made by now
	stopProbes()
	<-probesDone
	pods, err := remotePods()
	if err != nil {
		t.Fatal(err)
	}
	origins := map[string]int{}
	for _, p := range pods {
		origins[p.Name]++
	}
	if len(pods) != haPods || len(origins) != haPods {
		t.Errorf("milan runs %d pods for %d names; want exactly %d, none twice", len(pods), len(origins), haPods)
	}
	if refused.Load() > 0 || created.Load() == 0 {
		t.Errorf("pod creations through the webhook during the failover: %d admitted, %d refused (first: %v)", created.Load(), refused.Load(), firstRefusal.Load())
	}
	t.Logf("%d pods offloaded across the failover; %d pod creations admitted by the webhook meanwhile", len(pods), created.Load())
}

// leaderPod is the pod holding rome's controller manager lease ("" if
// none), from the holder identity controller-runtime writes
// ("<hostname>_<uuid>", the hostname being the pod's name).
func leaderPod(ctx context.Context, t *testing.T) string {
	t.Helper()
	l, err := rome.Client().CoordinationV1().Leases(consts.DefaultNamespace).Get(ctx, consts.ControllerManagerLease, metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	name, _, _ := strings.Cut(*l.Spec.HolderIdentity, "_")
	return name
}
