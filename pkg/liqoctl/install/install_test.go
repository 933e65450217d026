package install_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/liqo-go/liqo/deploy/charts/liqo/crds"
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
		"--cluster-labels", "region=eu", "--set", "sharing.percentage=30", "--version", "v1.2.3", "--dump-values-path", "-")
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
	if s := strings.TrimSuffix(strings.TrimSpace(yamlString(get("gateway", "replicas"))), ".0"); s != "2" {
		t.Errorf("--enable-ha: gateway.replicas %q, want 2 (active/standby gateways)", s)
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
		{"unknown provider", []string{"install", "openstack"}, 1, `unknown provider "openstack": use one of generic, kubeadm, kind, k3s, openshift, aks, eks, gke`},
		{"cloud without CIDRs", []string{"install", "aks", "--resource-group-name", "rg", "--resource-name", "rome"}, 1,
			"install aks needs --pod-cidr and --service-cidr: this liqoctl does not call the cloud's API to read them; az aks show --resource-group rg --name rome --query networkProfile prints them"},
		{"a cloud flag of another provider", []string{"install", "kind", "--eks-cluster-name", "rome"}, 1, "--eks-cluster-name is a flag of liqoctl install eks, not of install kind"},
		{"two names", []string{"install", "k3s", "--cluster-id", "rome", "--cluster-name", "milan"}, 1, `--cluster-name "milan" and --cluster-id "rome" differ`},
		{"not an OpenShift cluster", []string{"install", "openshift"}, 1, "no OpenShift network configuration"},
		{"generic without CIDRs", []string{"install", "generic"}, 1, "the generic provider needs --pod-cidr and --service-cidr"},
		{"pod CIDR without the pods", []string{"install", "generic", "--pod-cidr", "192.168.0.0/16", "--service-cidr", cluster.Spec.ServiceCIDR}, 1,
			"outside the pod CIDR 192.168.0.0/16"},
		{"service CIDR without the Services", []string{"install", "generic", "--pod-cidr", cluster.Spec.PodCIDR, "--service-cidr", "172.16.0.0/16"}, 1,
			"has ClusterIP"},
		{"overlapping CIDRs", []string{"install", "generic", "--pod-cidr", "10.0.0.0/8", "--service-cidr", cluster.Spec.ServiceCIDR}, 1, "overlap"},
		{"not a CIDR", []string{"install", "generic", "--pod-cidr", "10.244.0.0", "--service-cidr", cluster.Spec.ServiceCIDR}, 1, "is not an IPv4 CIDR"},
		{"bad cluster ID", []string{"install", "k3s", "--cluster-id", "Rome_1"}, 1, "--cluster-id"},
		{"bad cluster name", []string{"install", "k3s", "--cluster-name", "Rome_1"}, 1, "--cluster-name"},
		{"bad cloud name", []string{"install", "eks", "--eks-cluster-name", "Rome_1"}, 1, "--eks-cluster-name"},
		{"kubeadm without its controller manager pod", []string{"install", "kubeadm"}, 1, "no kube-controller-manager pod"},
		{"loopback API server", []string{"install", "k3s", "--kubeconfig", kubeconfig, "--api-server-url", ""}, 1, "loopback address, which peers cannot reach"},
		{"too many arguments", []string{"install", "kind", "k3s"}, 2, "accepts at most 1 arg"},
		{"a mistyped --set key", []string{"install", "generic", "--pod-cidr", cluster.Spec.PodCIDR, "--service-cidr", cluster.Spec.ServiceCIDR,
			"--set", "sharing.percentag=30"}, 1, "unknown chart value sharing.percentag: the chart has percentage under sharing"},
		{"an unknown top-level --set key", []string{"install", "generic", "--pod-cidr", cluster.Spec.PodCIDR, "--service-cidr", cluster.Spec.ServiceCIDR,
			"--set", "virtualKubelet.replicas=2"}, 1, "unknown chart value virtualKubelet: the chart has apiServer, auth, clusterID"},
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

// valuesOf runs liqoctl install with --only-output-values into a file and
// returns the values.
func valuesOf(t *testing.T, args ...string) (vals map[string]any, stderr string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "values.yaml")
	_, errOut, code := run(t, append(args, "--kubeconfig", kubeconfig, "--only-output-values", "--dump-values-path", path)...)
	if code != 0 {
		t.Fatalf("liqoctl %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &vals); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut, "INFO: Values written to "+path) {
		t.Errorf("no line saying where the values went:\n%s", errOut)
	}
	nothingInstalled(t)
	return vals, errOut
}

func valueAt(vals map[string]any, path ...string) any {
	var v any = vals
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	return v
}

// TestCloudProviders: install aks, eks and gke take the cluster's name
// from the cloud's, the networks from the flags, and warn about the cloud
// flags they ignore; --cluster-name overrides the cloud's name. Their API
// servers present no client certificate to webhooks, so the webhooks'
// caller authentication is off there, with a warning.
func TestCloudProviders(t *testing.T) {
	nets := []string{"--pod-cidr", cluster.Spec.PodCIDR, "--service-cidr", cluster.Spec.ServiceCIDR, "--api-server-url", "https://203.0.113.10:6443"}
	cases := []struct {
		args             []string
		name, warn, none string
	}{
		{[]string{"install", "aks", "--resource-group-name", "rg", "--resource-name", "rome", "--subscription-name", "sub"}, "rome",
			"WARN: --resource-group-name, --subscription-name ignored", ""},
		{[]string{"install", "eks", "--eks-cluster-region=eu-south-1", "--eks-cluster-name=milan"}, "milan", "WARN: --eks-cluster-region ignored", ""},
		{[]string{"install", "gke", "--cluster-id", "naples", "--zone", "europe-west1-b"}, "naples", "WARN: --zone ignored", ""},
		{[]string{"install", "gke", "--cluster-id", "gke-cluster", "--cluster-name", "florence"}, "florence", "", "WARN: --"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			vals, errOut := valuesOf(t, append(c.args, nets...)...)
			if got := valueAt(vals, "clusterID"); got != c.name {
				t.Errorf("clusterID %v, want %s", got, c.name)
			}
			if got := valueAt(vals, "ipam", "podCIDR"); got != cluster.Spec.PodCIDR {
				t.Errorf("ipam.podCIDR %v, want %s", got, cluster.Spec.PodCIDR)
			}
			if got := valueAt(vals, "webhook", "clientAuth", "enabled"); got != false {
				t.Errorf("webhook.clientAuth.enabled %v, want false", got)
			}
			if !strings.Contains(errOut, "presents no client certificate to webhooks") {
				t.Errorf("no warning about the webhooks' callers:\n%s", errOut)
			}
			if c.warn != "" && !strings.Contains(errOut, c.warn) {
				t.Errorf("no %q:\n%s", c.warn, errOut)
			}
			if c.none != "" && strings.Contains(errOut, c.none) {
				t.Errorf("unexpected %q:\n%s", c.none, errOut)
			}
		})
	}
}

// TestOpenShift reads the networks from OpenShift's Network "cluster",
// here a CRD and an object made as OpenShift's.
func TestOpenShift(t *testing.T) {
	ctx := context.Background()
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "networks.config.openshift.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "config.openshift.io", Scope: apiextensionsv1.ClusterScoped,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "networks", Singular: "network", Kind: "Network", ListKind: "NetworkList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
	if err := crds.Apply(ctx, cluster.Config, []*crds.CRD{crd}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = apiextensionsclient.NewForConfigOrDie(cluster.Config).ApiextensionsV1().CustomResourceDefinitions().Delete(ctx, crd.Name, metav1.DeleteOptions{})
	})
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "config.openshift.io/v1", "kind": "Network", "metadata": map[string]any{"name": "cluster"},
		"spec": map[string]any{
			"clusterNetwork": []any{map[string]any{"cidr": "fd00::/48", "hostPrefix": int64(64)}, map[string]any{"cidr": cluster.Spec.PodCIDR, "hostPrefix": int64(23)}},
			"serviceNetwork": []any{cluster.Spec.ServiceCIDR},
		},
	}}
	gvr := schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "networks"}
	if _, err := dynamic.NewForConfigOrDie(cluster.Config).Resource(gvr).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vals, _ := valuesOf(t, "install", "openshift", "--api-server-url", "https://203.0.113.10:6443")
	if got := valueAt(vals, "ipam", "podCIDR"); got != cluster.Spec.PodCIDR {
		t.Errorf("ipam.podCIDR %v, want the IPv4 clusterNetwork %s", got, cluster.Spec.PodCIDR)
	}
	if got := valueAt(vals, "ipam", "serviceCIDR"); got != cluster.Spec.ServiceCIDR {
		t.Errorf("ipam.serviceCIDR %v, want %s", got, cluster.Spec.ServiceCIDR)
	}
}

// TestDevelopmentChart: --local-chart-path and --repo-url (a git
// repository holding the chart, at a commit) give the chart whose values
// are written.
func TestDevelopmentChart(t *testing.T) {
	src, err := filepath.Abs("../../../deploy/charts/liqo")
	if err != nil {
		t.Fatal(err)
	}
	// A development chart: the embedded one with another default.
	repo := t.TempDir()
	dir := filepath.Join(repo, "deploy", "charts", "liqo")
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	valuesFile := filepath.Join(dir, "values.yaml")
	b, err := os.ReadFile(valuesFile)
	if err != nil {
		t.Fatal(err)
	}
	b = []byte(strings.Replace(string(b), "repository: ghcr.io/liqo-go", "repository: registry.example/dev", 1))
	if err := os.WriteFile(valuesFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"install", "k3s", "--api-server-url", "https://203.0.113.10:6443", "--pod-cidr", cluster.Spec.PodCIDR, "--service-cidr", cluster.Spec.ServiceCIDR}
	vals, errOut := valuesOf(t, append(base, "--local-chart-path", dir)...)
	if got := valueAt(vals, "image", "repository"); got != "registry.example/dev" {
		t.Errorf("--local-chart-path: image.repository %v, want the chart's registry.example/dev\n%s", got, errOut)
	}

	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "--quiet")
	git("add", ".")
	git("commit", "--quiet", "-m", "dev chart")
	sha := git("rev-parse", "HEAD")
	vals, errOut = valuesOf(t, append(base, "--repo-url", repo, "--version", sha)...)
	if got := valueAt(vals, "image", "repository"); got != "registry.example/dev" || valueAt(vals, "tag") != sha {
		t.Errorf("--repo-url: image.repository %v, tag %v: want the clone's chart at %s\n%s", got, valueAt(vals, "tag"), sha, errOut)
	}
	if _, errOut, code := run(t, append(base, "--kubeconfig", kubeconfig, "--repo-url", repo, "--version", "0000000000000000000000000000000000000000", "--only-output-values")...); code != 1 || !strings.Contains(errOut, "git -C") {
		t.Errorf("--repo-url at a commit that does not exist: exit %d, %q", code, errOut)
	}
}

// TestInstallTimeoutSaysWhy: an install whose components never get Ready
// (here a node selector no node matches) fails at its --timeout naming the
// pod and the scheduler's reason, though Helm's rollback removed the pod.
func TestInstallTimeoutSaysWhy(t *testing.T) {
	_, errOut, code := run(t, "install", "generic", "--kubeconfig", kubeconfig, "--api-server-url", "https://203.0.113.10:6443",
		"--pod-cidr", cluster.Spec.PodCIDR, "--service-cidr", cluster.Spec.ServiceCIDR,
		"--set", "controllerManager.nodeSelector.no-such-label=anywhere", "--timeout", "20s")
	if code != 1 || !strings.Contains(errOut, "not Ready when it ended: pod liqo-controller-manager-") ||
		!strings.Contains(errOut, "not scheduled") || !strings.Contains(errOut, "node(s) didn't match") {
		t.Errorf("exit %d, stderr %q; want a timeout naming the controller manager's pod and why it is not scheduled", code, errOut)
	}
	// The rollback leaves the namespace Helm created; the next tests want
	// none.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nss := cluster.Client().CoreV1().Namespaces()
	if err := nss.Delete(ctx, "liqo", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := nss.Get(ctx, "liqo", metav1.GetOptions{})
		return err != nil, nil
	}); err != nil {
		t.Fatalf("namespace liqo not gone: %v", err)
	}
	nothingInstalled(t)
}
