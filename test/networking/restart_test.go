package networking

import (
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
	"github.com/liqo-go/liqo/test/realpods"
)

// TestManagerRestart: a TCP connection from a pod on rome's real node to
// the offloaded pod (run by milan) carries a numbered line every 200 ms
// while both controller managers are restarted. The fabric does not
// depend on the managers: the gateway and node agent pods are the same
// afterwards, and the connection never broke (no line lost, no container
// restarted, the numbers go on past the restart).
func TestManagerRestart(t *testing.T) {
	ctx := realpods.Timeout(t, 8*time.Minute)
	if out, err := liqoctlRun(ctx, "peer", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs["milan"],
		"--server-service-type", "NodePort", "--timeout", "5m"); err != nil {
		t.Fatalf("peer: %v\n%s", err, out)
	}
	ns := realpods.Namespace(ctx, t, rome, "restart")
	if out, err := liqoctlRun(ctx, "offload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"], "--timeout", "2m"); err != nil {
		t.Fatalf("offload: %v\n%s", err, out)
	}
	cs := rome.Client()
	// busybox's nc ends the connection when its standard input ends: the
	// sink's never does.
	sink := busyboxPod(ns, "sink", "tail -f /dev/null | nc -l -p 9000")
	sink.Spec.NodeSelector = map[string]string{consts.TypeLabel: consts.TypeVirtualNode}
	sink.Spec.Tolerations = []corev1.Toleration{{Key: consts.VirtualNodeTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, sink, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sinkIP := realpods.RunningPods(ctx, t, rome, ns, "app=sink", 1)[0].Status.PodIP
	source := busyboxPod(ns, "source", "i=0; while true; do i=$((i+1)); echo $i; sleep 0.2; done | nc "+sinkIP+" 9000")
	source.Spec.NodeSelector = realpods.OnRealNodes
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, source, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	received := func() []string {
		out, err := realpods.Kubectl(ctx, rome, "logs", "-n", ns, "sink")
		if err != nil {
			return nil
		}
		return strings.Fields(out)
	}
	harness.Eventually(ctx, t, "the first lines through the tunnel", func() (bool, error) { return len(received()) >= 5, nil })

	fabricPods := func() map[types.UID]string {
		out := map[types.UID]string{}
		for _, c := range []*testbed.Cluster{rome, milan} {
			for _, ns := range []string{consts.DefaultNamespace, consts.TenantNamespace("rome"), consts.TenantNamespace("milan")} {
				pods, err := c.Client().CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range pods.Items {
					out[p.UID] = c.Name + "/" + p.Namespace + "/" + p.Name
				}
			}
		}
		return out
	}
	before := fabricPods()
	if len(before) == 0 {
		t.Fatal("no gateway or node agent pod found")
	}
	start := time.Now()
	for _, c := range []string{"rome", "milan"} {
		managers[c].Restart()
	}
	for _, c := range []string{"rome", "milan"} {
		if err := factory.WaitForComponents(ctx, kubeconfigs[c], consts.DefaultNamespace, 2*time.Minute); err != nil {
			t.Fatalf("%s's manager after the restart: %v", c, err)
		}
	}
	t.Logf("both managers restarted and ready in %s", time.Since(start).Round(100*time.Millisecond))
	atRestart := len(received())
	harness.Eventually(ctx, t, "lines after the restart", func() (bool, error) { return len(received()) >= atRestart+75, nil })

	lines := received()
	for i, l := range lines {
		if n, err := strconv.Atoi(l); err != nil || n != i+1 {
			t.Fatalf("line %d is %q, want %d: the connection broke (the source started over)\n%s", i+1, l, i+1, strings.Join(lines, " "))
		}
	}
	for _, name := range []string{"source", "sink"} {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range p.Status.ContainerStatuses {
			if st.RestartCount != 0 {
				t.Errorf("%s restarted %d times: its connection broke", name, st.RestartCount)
			}
		}
	}
	after := fabricPods()
	for uid, name := range before {
		if _, ok := after[uid]; !ok {
			t.Errorf("pod %s was replaced during the restart", name)
		}
	}
	t.Logf("%d lines in order through the tunnel, %d of them after the restart; %d fabric pods untouched", len(lines), len(lines)-atRestart, len(before))
}

// busyboxPod runs script in busybox, never restarting on its own.
func busyboxPod(ns, name, script string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers:                    []corev1.Container{{Name: name, Image: "busybox", Command: []string{"sh", "-c", script}}},
		},
	}
}
