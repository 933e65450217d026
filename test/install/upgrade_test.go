package install

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/realpods"
)

// TestUpgrade installs a build tagged testbed, peers and offloads a pod,
// then runs liqoctl install again with a build tagged upgraded on both
// clusters: the release is upgraded in place, the components run the new
// tag, the offloaded pod is untouched (same pod on milan, never
// restarted), the CRDs are updated (one lacking a field gets it back),
// the peering still works (a new pod is offloaded after it),
// and renaming the cluster on the way is refused.
func TestUpgrade(t *testing.T) {
	ctx := realpods.Timeout(t, 20*time.Minute)
	const tagB = "upgraded"
	for _, c := range []*testbed.Cluster{rome, milan} {
		if out, err := install(ctx, c); err != nil {
			t.Fatalf("install on %s: %v\n%s", c.Name, err, out)
		}
		if err := c.PushComponentsTagged(ctx, tagB); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { cleanup(t, "upgrade-") })
	if out, err := run(ctx, "peer", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs["milan"],
		"--networking-disabled", "--timeout", "5m"); err != nil {
		t.Fatalf("peer: %v\n%s", err, out)
	}
	ns := realpods.Namespace(ctx, t, rome, "upgrade")
	if out, err := run(ctx, "offload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"], "--pod-offloading-strategy", "Remote", "--timeout", "2m"); err != nil {
		t.Fatalf("offload: %v\n%s", err, out)
	}
	sleeper := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": name}},
			Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](1),
				Containers: []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"sleep", "3600"}}}}}
	}
	if _, err := rome.Client().CoreV1().Pods(ns).Create(ctx, sleeper("before"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	realpods.RunningPods(ctx, t, rome, ns, "app=before", 1)
	twin := ns + "-rome"
	remoteBefore, err := milan.Client().CoreV1().Pods(twin).Get(ctx, "before", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// Build A predates a field: its VirtualNode CRD lacks the optional
	// spec.loadBalancerClasses, which build B's has (the CRDs are embedded
	// in liqoctl, so A's schema is made by hand on the installed CRD).
	for _, c := range []*testbed.Cluster{milan, rome} {
		setCRDField(ctx, t, c, false)
	}

	if out, err := install(ctx, rome, "--cluster-id", "rome2"); err == nil || !strings.Contains(err.Error(), `already known to its peers as "rome"`) {
		t.Fatalf("renaming rome on upgrade: %v; want a refusal\n%s", err, out)
	}
	for _, c := range []*testbed.Cluster{milan, rome} {
		out, err := install(ctx, c, "--version", tagB)
		if err != nil {
			t.Fatalf("upgrade of %s: %v\n%s", c.Name, err, out)
		}
		if !strings.Contains(out, "Upgraded Liqo "+tagB) || !strings.Contains(out, "revision 2") {
			t.Errorf("upgrade of %s said:\n%s", c.Name, out)
		}
		dep, err := c.Client().AppsV1().Deployments(consts.DefaultNamespace).Get(ctx, "liqo-controller-manager", metav1.GetOptions{})
		if err != nil || !strings.HasSuffix(dep.Spec.Template.Spec.Containers[0].Image, ":"+tagB) {
			t.Errorf("%s's controller manager after the upgrade: %v, %v", c.Name, dep.Spec.Template.Spec.Containers[0].Image, err)
		}
	}

	for _, c := range []*testbed.Cluster{milan, rome} {
		if !setCRDField(ctx, t, c, true) {
			t.Errorf("%s: the upgrade did not bring the VirtualNode CRD's new optional field", c.Name)
		}
	}
	if out, err := realpods.Kubectl(ctx, rome, "get", "virtualnodes", "-A", "--no-headers"); err != nil || strings.Count(strings.TrimSpace(out), "\n") != 0 || !strings.Contains(out, "milan") {
		t.Errorf("VirtualNodes on rome after the upgrade: %v\n%s\nwant milan's, kept", err, out)
	}

	if out, err := run(ctx, "uninstall", "--kubeconfig", kubeconfigs["rome"]); err == nil {
		t.Fatalf("uninstall while peered succeeded:\n%s", out)
	}
	if _, err := rome.Client().CoreV1().Pods(ns).Create(ctx, sleeper("after"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	realpods.RunningPods(ctx, t, rome, ns, "app=after", 1)
	remoteAfter, err := milan.Client().CoreV1().Pods(twin).Get(ctx, "before", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if remoteAfter.UID != remoteBefore.UID || remoteAfter.Status.Phase != corev1.PodRunning || restarts(remoteAfter) != 0 {
		t.Errorf("the pod offloaded before the upgrade: uid %s → %s, phase %s, %d restarts; want it untouched",
			remoteBefore.UID, remoteAfter.UID, remoteAfter.Status.Phase, restarts(remoteAfter))
	}
	local, err := rome.Client().CoreV1().Pods(ns).Get(ctx, "before", metav1.GetOptions{})
	if err != nil || local.Status.Phase != corev1.PodRunning {
		t.Errorf("the local pod offloaded before the upgrade: %v, %v", local.Status.Phase, err)
	}
}

func restarts(p *corev1.Pod) int32 {
	var n int32
	for _, s := range p.Status.ContainerStatuses {
		n += s.RestartCount
	}
	return n
}

// cleanup unoffloads the namespaces named with prefix, unpeers and
// uninstalls both clusters, so that the package's other tests start from
// bare clusters.
func cleanup(t *testing.T, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	nss, _ := rome.Client().CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	for _, n := range nss.Items {
		if strings.HasPrefix(n.Name, prefix) {
			if out, err := run(ctx, "unoffload", "namespace", n.Name, "--kubeconfig", kubeconfigs["rome"], "--timeout", "3m"); err != nil {
				t.Logf("cleanup: unoffload %s: %v\n%s", n.Name, err, out)
			}
		}
	}
	if out, err := run(ctx, "unpeer", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs["milan"], "--timeout", "3m", "--delete-namespaces"); err != nil {
		t.Logf("cleanup: unpeer: %v\n%s", err, out)
	}
	for _, c := range []string{"rome", "milan"} {
		if out, err := run(ctx, "uninstall", "--purge", "--kubeconfig", kubeconfigs[c], "--timeout", "3m"); err != nil {
			t.Logf("cleanup: uninstall %s: %v\n%s", c, err, out)
		}
	}
}

// setCRDField reports whether c's VirtualNode CRD has the optional
// spec.loadBalancerClasses; with present false it first removes the field,
// as an older build's CRD would lack it.
func setCRDField(ctx context.Context, t *testing.T, c *testbed.Cluster, present bool) bool {
	t.Helper()
	cs, err := apiextensionsclient.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	api := cs.ApiextensionsV1().CustomResourceDefinitions()
	crd, err := api.Get(ctx, "virtualnodes.offloading.liqo.io", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	_, has := spec.Properties["loadBalancerClasses"]
	if present || !has {
		return has
	}
	delete(spec.Properties, "loadBalancerClasses")
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	if _, err := api.Update(ctx, crd, metav1.UpdateOptions{FieldManager: "older-build"}); err != nil {
		t.Fatalf("%s: removing the field from the VirtualNode CRD: %v", c.Name, err)
	}
	return false
}
