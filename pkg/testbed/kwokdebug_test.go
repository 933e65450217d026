package testbed

import (
	"github.com/liqo-go/liqo/test/harness"

	"bufio"
	"bytes"
	"context"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKwokLogsExec: kubectl logs, exec and port-forward reach the simulated
// pods of a testbed cluster, each answering with the cluster's name.
func TestKwokLogsExec(t *testing.T) {
	c := shared.Clusters[1]
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs := c.Client()
	ns := createNamespace(ctx, t, cs, "debug")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(ctx, t, "the pod to run", func() (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, err
	})

	kubectl := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, c.KubectlPath(), append([]string{"--kubeconfig", c.Kubeconfig, "-n", ns}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("kubectl %s: %v: %s", strings.Join(args, " "), err, stderr.String())
		}
		return string(out)
	}
	if got, want := kubectl("", "logs", pod.Name), c.PodLogLine()+"\n"; got != want {
		t.Errorf("kubectl logs = %q, want %q", got, want)
	}
	if got := kubectl("", "logs", pod.Name, "--timestamps"); !strings.HasSuffix(got, " "+c.PodLogLine()+"\n") || len(got) <= len(c.PodLogLine())+1 {
		t.Errorf("kubectl logs --timestamps = %q, want a time before the line", got)
	}
	if got := kubectl("", "exec", pod.Name, "--", "sh", "-c", "echo $"+ExecClusterEnv); got != c.Name+"\n" {
		t.Errorf("kubectl exec printed %q, want %q", got, c.Name+"\n")
	}
	// kwok's exec never sees the end of stdin: head ends the command.
	if got := kubectl("hello\n", "exec", "-i", pod.Name, "--", "head", "-n1"); got != "hello\n" {
		t.Errorf("kubectl exec -i head -n1 printed %q, want the input line", got)
	}

	local, err := PortForward(ctx, c.Config, ns, pod.Name, 8080)
	if err != nil {
		t.Fatal(err)
	}
	checkEcho(t, local, c.PortForwardGreeting())
}

// checkEcho reads the greeting of a testbed port-forward at addr and checks
// that what it sends comes back.
func checkEcho(t *testing.T, addr, greeting string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	r := bufio.NewReader(conn)
	line, err := r.ReadString('\n')
	if err != nil || line != greeting+"\n" {
		t.Fatalf("port-forward greeting %q (%v), want %q", line, err, greeting)
	}
	if _, err := conn.Write([]byte("ping\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := r.ReadString('\n'); err != nil || line != "ping\n" {
		t.Errorf("port-forward echoed %q (%v), want ping", line, err)
	}
}
