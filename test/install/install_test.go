package install

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
	"github.com/liqo-go/liqo/test/realpods"
)

// TestInstallPeerOffload is the acceptance of the in-cluster install:
// liqoctl install brings the components Ready in pods on the real nodes of
// both clusters; liqoctl peer, offload namespace, an offloaded pod Running
// on milan's real node, kubectl logs and exec on it through rome's API
// server (which reaches the virtual kubelet in the manager's pod) all work
// with the in-cluster components; uninstall refuses while peered, naming
// the peer, and after unpeering --purge leaves nothing of ours. On the way,
// kubectl top shows the offloaded pod and the virtual node, and the
// provider's re-creation of the pod counts as a restart.
func TestInstallPeerOffload(t *testing.T) {
	ctx := realpods.Timeout(t, 20*time.Minute)
	for _, c := range []*testbed.Cluster{rome, milan} {
		start := time.Now()
		out, err := install(ctx, c)
		if err != nil {
			t.Fatalf("install on %s: %v\n%s", c.Name, err, out)
		}
		t.Logf("liqoctl install on %s took %s:\n%s", c.Name, time.Since(start).Round(time.Second), out)
		pods, err := c.Client().CoreV1().Pods(consts.DefaultNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=liqo-controller-manager"})
		if err != nil || len(pods.Items) != 1 || !realpods.PodReady(&pods.Items[0]) || !strings.HasPrefix(pods.Items[0].Spec.NodeName, "real-") {
			t.Fatalf("%s: controller manager pods %v (%v); want one, Ready, on a real node", c.Name, podSummary(pods), err)
		}
		referenceToolsFind(ctx, t, c)
	}

	out, err := run(ctx, "peer", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs["milan"],
		"--server-service-type", "NodePort", "--timeout", "5m")
	if err != nil {
		t.Fatalf("peer: %v\n%s", err, out)
	}
	ns := realpods.Namespace(ctx, t, rome, "offloaded")
	if out, err := run(ctx, "offload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"], "--timeout", "2m"); err != nil {
		t.Fatalf("offload: %v\n%s", err, out)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "talker", Namespace: ns, Labels: map[string]string{"app": "talker"}},
		Spec: corev1.PodSpec{
			NodeSelector:                  map[string]string{consts.TypeLabel: consts.TypeVirtualNode},
			Tolerations:                   []corev1.Toleration{{Key: consts.VirtualNodeTaintKey, Operator: corev1.TolerationOpExists}},
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{Name: "talk", Image: "busybox",
				Command: []string{"sh", "-c", "echo hello from milan; exec sleep 3600"}}},
		},
	}
	if _, err := rome.Client().CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	realpods.RunningPods(ctx, t, rome, ns, "app=talker", 1)
	harness.Eventually(ctx, t, "the offloaded container's log through rome's API server", func() (bool, error) {
		out, err := realpods.Kubectl(ctx, rome, "logs", "-n", ns, "talker")
		return strings.Contains(out, "hello from milan"), err
	})
	if out, err := realpods.Kubectl(ctx, rome, "exec", "-n", ns, "talker", "--", "sh", "-c", "echo exec in $(hostname)"); err != nil || strings.TrimSpace(out) != "exec in talker" {
		t.Errorf("exec: %q, %v", out, err)
	}
	offloadedUsage(ctx, t, ns)
	restartsAcrossRecreation(ctx, t, ns)

	out, err = run(ctx, "uninstall", "--kubeconfig", kubeconfigs["rome"])
	if err == nil || !strings.Contains(err.Error(), "peered with milan") {
		t.Fatalf("uninstall while peered: %v; want a refusal naming milan\n%s", err, out)
	}

	if out, err := run(ctx, "unoffload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"], "--timeout", "2m"); err != nil {
		t.Fatalf("unoffload: %v\n%s", err, out)
	}
	if out, err := run(ctx, "unpeer", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs["milan"], "--timeout", "3m", "--delete-namespaces"); err != nil {
		t.Fatalf("unpeer: %v\n%s", err, out)
	}
	// milan's release goes with plain helm uninstall, as a Helm user removes
	// it: the chart's objects and what the controller manager made go too.
	helmUninstall(t, milan)
	// Deletion by the garbage collector takes a moment; a minute is plenty.
	var left []string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(2 * time.Second) {
		if left = leftovers(ctx, t, milan, keptByHelmUninstall); len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(left) > 0 {
		t.Errorf("milan: left after helm uninstall (besides the CRDs and the cluster's identity): %v", left)
	}
	for _, c := range []*testbed.Cluster{rome, milan} {
		if out, err := run(ctx, "uninstall", "--purge", "--kubeconfig", kubeconfigs[c.Name], "--timeout", "3m"); err != nil {
			t.Fatalf("uninstall --purge on %s: %v\n%s", c.Name, err, out)
		}
		nothingLeft(ctx, t, c)
	}
}

// referenceToolsFind looks the installed components up as the reference
// system's liqoctl does: the cluster ID from the ConfigMap labelled
// app.kubernetes.io/name=clusterid-configmap (key CLUSTER_ID), the version
// from the image of container controller-manager in the Deployment labelled
// app.kubernetes.io/name=controller-manager.
func referenceToolsFind(ctx context.Context, t *testing.T, c *testbed.Cluster) {
	t.Helper()
	cms, err := c.Client().CoreV1().ConfigMaps(consts.DefaultNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=clusterid-configmap"})
	if err != nil || len(cms.Items) != 1 || cms.Items[0].Data["CLUSTER_ID"] != c.Name {
		t.Errorf("%s: the cluster ID by the reference's label: %v (%v); want one ConfigMap with CLUSTER_ID %s", c.Name, cms, err, c.Name)
	}
	deps, err := c.Client().AppsV1().Deployments(consts.DefaultNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=controller-manager"})
	if err != nil || len(deps.Items) != 1 {
		t.Errorf("%s: the controller manager by the reference's label: %v; want one Deployment", c.Name, err)
		return
	}
	for _, ctr := range deps.Items[0].Spec.Template.Spec.Containers {
		if ctr.Name == "controller-manager" && strings.HasSuffix(ctr.Image, ":"+testbed.TestImageTag) {
			return
		}
	}
	t.Errorf("%s: the Deployment %s has no container controller-manager with image tag %s", c.Name, deps.Items[0].Name, testbed.TestImageTag)
}

func podSummary(pods *corev1.PodList) []string {
	if pods == nil {
		return nil
	}
	var out []string
	for _, p := range pods.Items {
		out = append(out, p.Name+"@"+p.Spec.NodeName+":"+string(p.Status.Phase))
	}
	return out
}

// nothingLeft checks that c holds no object of ours: no *.liqo.io CRD, no
// install or tenant namespace, no webhook configuration, ClusterRole or
// ClusterRoleBinding, no CSR, no virtual Node.
func nothingLeft(ctx context.Context, t *testing.T, c *testbed.Cluster) {
	t.Helper()
	var left []string
	for _, kind := range []string{"customresourcedefinitions", "namespaces", "mutatingwebhookconfigurations", "validatingwebhookconfigurations",
		"clusterroles", "clusterrolebindings", "certificatesigningrequests", "nodes"} {
		out, err := realpods.Kubectl(ctx, c, "get", kind, "-o", "name")
		if err != nil {
			t.Fatalf("%s: kubectl get %s: %v", c.Name, kind, err)
		}
		for _, name := range strings.Fields(out) {
			if strings.Contains(name, "liqo") {
				left = append(left, name)
			}
		}
	}
	if len(left) > 0 {
		t.Errorf("%s: left after uninstall --purge: %v", c.Name, left)
	}
}
