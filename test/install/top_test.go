package install

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"k8s.io/utils/ptr"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/test/harness"
	"github.com/liqo-go/liqo/test/realpods"
)

// offloadedUsage: a pod offloaded to milan burns CPU in a real container
// there; rome's metrics-server, scraping the virtual node's kubelet API,
// reports its usage (milan's measure of the twin) as non-zero, the virtual
// node has node metrics, and kubectl top shows both.
func offloadedUsage(ctx context.Context, t *testing.T, ns string) {
	t.Helper()
	burner := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "burner", Namespace: ns},
		Spec: corev1.PodSpec{
			NodeSelector:                  map[string]string{consts.TypeLabel: consts.TypeVirtualNode},
			Tolerations:                   []corev1.Toleration{{Key: consts.VirtualNodeTaintKey, Operator: corev1.TolerationOpExists}},
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{Name: "burn", Image: "busybox", Command: []string{"sh", "-c", "while :; do :; done"},
				// A tenth of a core: enough to measure, little for a shared machine.
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("32Mi")}}}},
		},
	}
	if _, err := rome.Client().CoreV1().Pods(ns).Create(ctx, burner, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mc, err := metricsclient.NewForConfig(rome.Config)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	// milan's metrics-server measures the twin after two scrapes of its
	// kubelet, rome's after two scrapes of the virtual node: about a
	// minute at the 15 s resolution.
	harness.Eventually(ctx, t, "rome's PodMetrics of the offloaded pod, non-zero", func() (bool, error) {
		time.Sleep(2 * time.Second)
		m, err := mc.MetricsV1beta1().PodMetricses(ns).Get(ctx, "burner", metav1.GetOptions{})
		if err != nil || len(m.Containers) != 1 {
			return false, err
		}
		cpu, mem := m.Containers[0].Usage[corev1.ResourceCPU], m.Containers[0].Usage[corev1.ResourceMemory]
		return cpu.Sign() > 0 && mem.Sign() > 0, nil
	})
	t.Logf("the offloaded pod's usage reached rome's metrics API after %s", time.Since(start).Round(time.Second))
	// A fresh container's first scrape may give its first figure; the
	// node's takes two.
	harness.Eventually(ctx, t, "rome's NodeMetrics of the virtual node milan, non-zero", func() (bool, error) {
		time.Sleep(2 * time.Second)
		nm, err := mc.MetricsV1beta1().NodeMetricses().Get(ctx, "milan", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		cpu := nm.Usage[corev1.ResourceCPU]
		return cpu.Sign() > 0, nil
	})
	if out, err := realpods.Kubectl(ctx, rome, "top", "pod", "-n", ns, "burner"); err != nil || !strings.Contains(out, "burner") {
		t.Errorf("kubectl top pod burner: %q, %v", out, err)
	}
	if out, err := realpods.Kubectl(ctx, rome, "top", "node"); err != nil || !strings.Contains(out, "milan") {
		t.Errorf("kubectl top node: %q, %v; want the virtual node milan", out, err)
	}
	if err := rome.Client().CoreV1().Pods(ns).Delete(ctx, burner.Name, metav1.DeleteOptions{}); err != nil {
		t.Error(err)
	}
}

// restartsAcrossRecreation: milan's pod of the offloaded talker is
// deleted; milan makes a new one from the ShadowPod, and the local pod's
// restart count goes from 0 to 1, never down.
func restartsAcrossRecreation(ctx context.Context, t *testing.T, ns string) {
	t.Helper()
	twin := ns + "-rome"
	remote, err := milan.Client().CoreV1().Pods(twin).Get(ctx, "talker", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stopWatching := harness.WatchRestarts(ctx, t, rome.Client(), ns, "talker")
	if err := milan.Client().CoreV1().Pods(twin).Delete(ctx, remote.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(ctx, t, "the local pod counting the re-creation as a restart, Running", func() (bool, error) {
		p, err := rome.Client().CoreV1().Pods(ns).Get(ctx, "talker", metav1.GetOptions{})
		return err == nil && realpods.PodReady(p) && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount == 1, err
	})
	stopWatching()
}
