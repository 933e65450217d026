// Package realpods holds what tests on the testbed's real nodes share: web
// server and client pods, waiting for them, fetching through them.
package realpods

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
)

// Kubectl runs the cluster's kubectl and returns its combined output.
func Kubectl(ctx context.Context, c *testbed.Cluster, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, c.KubectlPath(), append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// Namespace creates a namespace named prefix-<random>, deleted when the
// test ends.
func Namespace(ctx context.Context, t *testing.T, c *testbed.Cluster, prefix string) string {
	t.Helper()
	ns, err := c.Client().CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Client().CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	})
	return ns.Name
}

// OnRealNodes pins a pod to the real nodes.
var OnRealNodes = map[string]string{testbed.NodeTypeLabel: testbed.RealNodeType}

// WebServer is busybox's httpd answering with the pod's name on port 8080.
func WebServer() corev1.Container {
	return corev1.Container{
		Name:    "web",
		Image:   "busybox",
		Command: []string{"sh", "-c", "mkdir -p /www && hostname > /www/index.html && exec httpd -f -p 8080 -h /www"},
		Ports:   []corev1.ContainerPort{{ContainerPort: 8080}},
	}
}

// DeployWeb runs n web servers spread over the real nodes and a Service
// "web" in front of them (a NodePort one if nodePort is set).
func DeployWeb(ctx context.Context, t *testing.T, c *testbed.Cluster, ns string, n int32, nodePort int32) {
	t.Helper()
	labels := map[string]string{"app": "web"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(n),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector:                  OnRealNodes,
					TerminationGracePeriodSeconds: ptr.To[int64](1),
					Containers:                    []corev1.Container{WebServer()},
					TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
						MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.ScheduleAnyway,
						LabelSelector: &metav1.LabelSelector{MatchLabels: labels},
					}},
				},
			},
		},
	}
	if _, err := c.Client().AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: corev1.ServiceSpec{
			Selector: labels,
			Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080), NodePort: nodePort}},
		},
	}
	if nodePort != 0 {
		svc.Spec.Type = corev1.ServiceTypeNodePort
	}
	if _, err := c.Client().CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// RunningPods waits for n Running and Ready pods matching selector.
func RunningPods(ctx context.Context, t *testing.T, c *testbed.Cluster, ns, selector string, n int) []corev1.Pod {
	t.Helper()
	var pods []corev1.Pod
	harness.Eventually(ctx, t, fmt.Sprintf("%d Ready pods %s in %s/%s", n, selector, c.Name, ns), func() (bool, error) {
		list, err := c.Client().CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, err
		}
		pods = nil
		for _, p := range list.Items {
			if p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" && PodReady(&p) && p.DeletionTimestamp == nil {
				pods = append(pods, p)
			}
		}
		return len(pods) == n, nil
	})
	return pods
}

// PodReady tells whether p is Ready.
func PodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Client starts a busybox pod that sleeps, to run wget and nslookup in,
// on the given node (any real node if empty).
func Client(ctx context.Context, t *testing.T, c *testbed.Cluster, ns, node string) string {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "client", Namespace: ns, Labels: map[string]string{"app": "client"}},
		Spec: corev1.PodSpec{
			NodeSelector:                  OnRealNodes,
			NodeName:                      node,
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers:                    []corev1.Container{{Name: "client", Image: "busybox", Command: []string{"sleep", "3600"}}},
		},
	}
	if _, err := c.Client().CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	RunningPods(ctx, t, c, ns, "app=client", 1)
	return pod.Name
}

// Fetch runs wget in pod and returns the body, retrying for a while: a
// Service's rules reach kube-proxy a moment after its endpoints are ready.
func Fetch(ctx context.Context, t *testing.T, c *testbed.Cluster, ns, pod, url string) string {
	t.Helper()
	var body string
	harness.Eventually(ctx, t, fmt.Sprintf("%s from pod %s/%s in %s", url, ns, pod, c.Name), func() (bool, error) {
		// busybox's own timeout: Debian's static busybox 1.35 wget crashes
		// (SIGSEGV) with -T.
		out, err := Kubectl(ctx, c, "exec", "-n", ns, pod, "--", "timeout", "5", "wget", "-q", "-O", "-", url)
		if err != nil {
			return false, err
		}
		body = strings.TrimSpace(out)
		return true, nil
	})
	return body
}

// Timeout is a context ending after d or with the test.
func Timeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
