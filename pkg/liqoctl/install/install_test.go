package install_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/liqo-go/liqo/pkg/liqoctl"
	"github.com/liqo-go/liqo/pkg/testbed"
)

var (
	cluster    *testbed.Cluster
	kubeconfig string
)

func TestMain(m *testing.M) {
	testbed.Main(m, func(tb *testbed.Testbed) {
		cluster = tb.Clusters[0]
		// In the testbed's directory, which Stop removes.
		kubeconfig = filepath.Join(tb.Dir, "install.kubeconfig")
		err := cluster.WriteKubeconfig(kubeconfig)
		if err == nil {
			err = runningPod()
		}
		testbed.Must(tb, err)
	}, testbed.ClusterSpec{Name: "install"})
}

// runningPod starts a pod on a simulated node and waits for its IP: the
// check of the pod CIDR needs a pod to check.
func runningPod() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "some-pod", Namespace: "default"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}},
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}}
	pods := cluster.Client().CoreV1().Pods("default")
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return err
	}
	return wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		p, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
		return err == nil && p.Status.PodIP != "", nil
	})
}

func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errOut strings.Builder
	code = liqoctl.Run(ctx, args, &out, &errOut)
	return out.String(), errOut.String(), code
}

// nothingInstalled checks that the cluster has no trace of an install.
func nothingInstalled(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if _, err := cluster.Client().CoreV1().Namespaces().Get(ctx, "liqo", metav1.GetOptions{}); err == nil {
		t.Errorf("namespace liqo exists")
	}
	secrets, err := cluster.Client().CoreV1().Secrets("").List(ctx, metav1.ListOptions{LabelSelector: "owner=helm"})
	if err != nil || len(secrets.Items) > 0 {
		t.Errorf("Helm release records: %d, %v", len(secrets.Items), err)
	}
}

// TestOnlyOutputValues prints the merged values, with the flags' and
// --set's over the chart's, and installs nothing.
func TestOnlyOutputValues(t *testing.T) {
	out, errOut, code := run(t, "install", "kubeadm", "--kubeconfig", kubeconfig, "--only-output-values",
		"--pod-cidr", cluster.Spec.PodCIDR, "--service-cidr", cluster.Spec.ServiceCIDR,
		"--api-server-url", "https://203.0.113.10:6443", "--cluster-id", "rome", "--enable-ha",
		"--cluster-labels", "region=eu", "--set", "sharing.percentage=30", "--version", "v1.2.3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var vals map[string]any
	if err := yaml.Unmarshal([]byte(out), &vals); err != nil {
		t.Fatalf("stdout is not the values' YAML: %v\n%s", err, out)
	}
	get := func(path ...string) any {
		var v any = vals
		for _, p := range path {
			m, _ := v.(map[string]any)
			v = m[p]
		}
		return v
	}
	for want, got := range map[string]any{
		"rome": get("clusterID"), "https://203.0.113.10:6443": get("apiServer", "address"), "v1.2.3": get("tag"),
		"eu": get("clusterLabels", "region"), cluster.Spec.PodCIDR: get("ipam", "podCIDR"),
		"30": get("sharing", "percentage"), "2": get("controllerManager", "replicas"), "ghcr.io/liqo-go": get("image", "repository"),
	} {
		if s := strings.TrimSuffix(strings.TrimSpace(yamlString(got)), ".0"); s != want {
			t.Errorf("merged values: got %q, want %q", s, want)
		}
	}
	if !strings.Contains(errOut, "Finding the cluster's networks") {
		t.Errorf("the progress is not on stderr: %q", errOut)
	}
	nothingInstalled(t)
}

func yamlString(v any) string {
	b, _ := yaml.Marshal(v)
	return string(b)
}

// TestBadInput: each mistake gets an error saying what to do, and nothing
// is installed.
func TestBadInput(t *testing.T) {
	base := []string{"--kubeconfig", kubeconfig, "--api-server-url", "https://203.0.113.10:6443"}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown provider", []string{"install", "eks"}, 1, `unknown provider "eks": use one of generic, kubeadm, kind, k3s`},
		{"generic without CIDRs", []string{"install", "generic"}, 1, "the generic provider needs --pod-cidr and --service-cidr"},
		{"pod CIDR without the pods", []string{"install", "generic", "--pod-cidr", "192.168.0.0/16", "--service-cidr", cluster.Spec.ServiceCIDR}, 1,
			"outside the pod CIDR 192.168.0.0/16"},
		{"service CIDR without the Services", []string{"install", "generic", "--pod-cidr", cluster.Spec.PodCIDR, "--service-cidr", "172.16.0.0/16"}, 1,
			"has ClusterIP"},
		{"overlapping CIDRs", []string{"install", "generic", "--pod-cidr", "10.0.0.0/8", "--service-cidr", cluster.Spec.ServiceCIDR}, 1, "overlap"},
		{"not a CIDR", []string{"install", "generic", "--pod-cidr", "10.244.0.0", "--service-cidr", cluster.Spec.ServiceCIDR}, 1, "is not an IPv4 CIDR"},
		{"bad cluster ID", []string{"install", "k3s", "--cluster-id", "Rome_1"}, 1, "--cluster-id"},
		{"kubeadm without its controller manager pod", []string{"install", "kubeadm"}, 1, "no kube-controller-manager pod"},
		{"loopback API server", []string{"install", "k3s", "--kubeconfig", kubeconfig, "--api-server-url", ""}, 1, "loopback address, which peers cannot reach"},
		{"too many arguments", []string{"install", "kind", "k3s"}, 2, "accepts at most 1 arg"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, errOut, code := run(t, append(c.args, base...)...)
			if c.name == "loopback API server" {
				_, errOut, code = run(t, c.args...)
			}
			if code != c.code || !strings.Contains(errOut, c.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut, c.code, c.want)
			}
		})
	}
	// An unreachable cluster.
	dead := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(dead, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := run(t, "install", "k3s", "--kubeconfig", dead); code != 1 || !strings.Contains(errOut, "unreachable") {
		t.Errorf("unreachable cluster: exit %d, %q", code, errOut)
	}
	nothingInstalled(t)
}

// TestUninstallNothing: uninstalling where nothing is installed says so.
func TestUninstallNothing(t *testing.T) {
	out, errOut, code := run(t, "uninstall", "--kubeconfig", kubeconfig, "--namespace", "not-installed")
	if code != 0 || !strings.Contains(out, "No release liqo in namespace not-installed") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
