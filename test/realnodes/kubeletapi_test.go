package realnodes

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/liqo-go/liqo/test/harness"
	"github.com/liqo-go/liqo/test/realpods"
)

// TestKubeletAPI reads a real pod's logs, runs a command in it and forwards
// a port to it, all through the API server, which reaches the kubelet on
// the underlay.
func TestKubeletAPI(t *testing.T) {
	ctx := realpods.Timeout(t, 3*time.Minute)
	ns := realpods.Namespace(ctx, t, east, "kubelet-api")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "talker", Namespace: ns, Labels: map[string]string{"app": "talker"}},
		Spec: corev1.PodSpec{
			NodeSelector:                  realpods.OnRealNodes,
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{
				Name: "web", Image: "busybox",
				Command: []string{"sh", "-c", "echo hello from a real container; mkdir -p /www; echo forwarded > /www/index.html; exec httpd -f -p 8080 -h /www"},
			}},
		},
	}
	if _, err := east.Client().CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	realpods.RunningPods(ctx, t, east, ns, "app=talker", 1)

	harness.Eventually(ctx, t, "the container's log", func() (bool, error) {
		out, err := realpods.Kubectl(ctx, east, "logs", "-n", ns, "talker")
		return strings.Contains(out, "hello from a real container"), err
	})
	out, err := realpods.Kubectl(ctx, east, "exec", "-n", ns, "talker", "--", "sh", "-c", "echo exec in $(hostname)")
	if err != nil || strings.TrimSpace(out) != "exec in talker" {
		t.Errorf("exec: %q, %v", out, err)
	}

	// kubectl port-forward listens on this machine's loopback only.
	pf := exec.CommandContext(ctx, east.KubectlPath(), "--kubeconfig", east.Kubeconfig,
		"port-forward", "-n", ns, "pod/talker", "--address", "127.0.0.1", ":8080")
	stdout, err := pf.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := pf.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pf.Process.Kill(); _ = pf.Wait() }()
	// "Forwarding from 127.0.0.1:PORT -> 8080"
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("port-forward printed nothing: %v", err)
	}
	var local string
	if _, err := fmt.Sscanf(line, "Forwarding from %s ->", &local); err != nil {
		t.Fatalf("port-forward said %q", line)
	}
	resp, err := http.Get("http://" + local + "/")
	if err != nil {
		t.Fatalf("GET through port-forward: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.TrimSpace(string(body)) != "forwarded" {
		t.Errorf("port-forward answered %q", body)
	}
}

// TestCrashingContainerRestarts runs a container that exits at once: the
// kubelet restarts it and the restart count shows in kubectl.
func TestCrashingContainerRestarts(t *testing.T) {
	ctx := realpods.Timeout(t, 3*time.Minute)
	ns := realpods.Namespace(ctx, t, east, "crash")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "crasher", Namespace: ns},
		Spec: corev1.PodSpec{
			NodeSelector: realpods.OnRealNodes,
			Containers:   []corev1.Container{{Name: "main", Image: "busybox", Command: []string{"sh", "-c", "echo crashing; exit 3"}}},
		},
	}
	if _, err := east.Client().CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(ctx, t, "the crashing container restarted twice", func() (bool, error) {
		p, err := east.Client().CoreV1().Pods(ns).Get(ctx, "crasher", metav1.GetOptions{})
		if err != nil || len(p.Status.ContainerStatuses) == 0 {
			return false, err
		}
		st := p.Status.ContainerStatuses[0]
		if term := st.LastTerminationState.Terminated; term != nil && term.ExitCode != 3 {
			return false, fmt.Errorf("the container exited with %d, want 3", term.ExitCode)
		}
		return st.RestartCount >= 2, nil
	})
	out, err := realpods.Kubectl(context.Background(), east, "get", "pod", "-n", ns, "crasher", "--no-headers")
	if err != nil {
		t.Fatal(err)
	}
	// NAME READY STATUS RESTARTS AGE
	if f := strings.Fields(out); len(f) < 4 || f[3] == "0" {
		t.Errorf("kubectl get pod shows no restarts: %q", out)
	}
}
