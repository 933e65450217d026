package peering

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/test/harness"
)

// TestOffloadingPolicies follows the guide's "Offloading with Policies"
// chapter on rome, consumer of milan (region north-italy) and naples
// (region south-italy): the namespace's strategy and cluster selector,
// merged with each pod's own constraints, decide where its pods run.
func TestOffloadingPolicies(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	peer(t, "rome", "milan")
	peer(t, "rome", "naples")
	rome := clusterClient(t, "rome")

	t.Run("LocalAndRemote, south only: pods run locally or on naples, never on milan", func(t *testing.T) {
		const ns = "policies"
		if twin := offloadWith(ctx, t, rome, ns, "--namespace-mapping-strategy", "EnforceSameName",
			"--pod-offloading-strategy", "LocalAndRemote", "--selector", "region=south-italy"); twin != ns {
			t.Errorf("twin namespace %q, want %q (EnforceSameName)", twin, ns)
		}
		checkTwin(t, "naples", ns)
		south := placementPod(ns, "app-south", consts.RemoteClusterIDLabel, "naples")
		center := placementPod(ns, "app-center", consts.RemoteClusterIDLabel, "milan")
		free := placementPod(ns, "app-free", "", "")
		for _, p := range []*corev1.Pod{south, center, free} {
			if err := rome.Create(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		if node := waitScheduled(ctx, t, rome, south); node != "naples" {
			t.Errorf("app-south runs on %s, want naples' virtual node", node)
		}
		waitOffloadedTo(ctx, t, rome, south, "naples")
		if node := waitScheduled(ctx, t, rome, free); node == "milan" {
			t.Errorf("app-free runs on milan, which the namespace's selector excludes")
		}
		// app-center asks for milan, which the namespace excludes: it stays
		// Pending and says why.
		waitEvent(ctx, t, ns, "app-center", "FailedScheduling")
		if err := rome.Get(ctx, client.ObjectKeyFromObject(center), center); err != nil {
			t.Fatal(err)
		}
		if center.Spec.NodeName != "" || center.Status.Phase != corev1.PodPending {
			t.Errorf("app-center is %s on %q, want Pending and unscheduled", center.Status.Phase, center.Spec.NodeName)
		}
	})

	t.Run("Remote: every pod runs on a virtual node", func(t *testing.T) {
		const ns = "policies-remote"
		offloadWith(ctx, t, rome, ns, "--pod-offloading-strategy", "Remote")
		for i := range 4 {
			p := placementPod(ns, fmt.Sprintf("remote-%d", i), "", "")
			if err := rome.Create(ctx, p); err != nil {
				t.Fatal(err)
			}
			node := waitScheduled(ctx, t, rome, p)
			if node != "milan" && node != "naples" {
				t.Errorf("pod %s runs on %s, want a virtual node", p.Name, node)
			}
		}
		// A pod that insists on a local node contradicts the namespace: it
		// stays Pending, and the webhook tells why.
		local := placementPod(ns, "wants-local", consts.TypeLabel+"!", "")
		if err := rome.Create(ctx, local); err != nil {
			t.Fatal(err)
		}
		waitEvent(ctx, t, ns, "wants-local", "OffloadingConflict")
	})

	t.Run("Local: pods stay local even if they tolerate the virtual nodes, and the twins exist", func(t *testing.T) {
		const ns = "policies-local"
		twin := offloadWith(ctx, t, rome, ns, "--pod-offloading-strategy", "Local")
		checkTwin(t, "milan", twin)
		checkTwin(t, "naples", twin)
		for i := range 4 {
			p := placementPod(ns, fmt.Sprintf("local-%d", i), "", "")
			p.Spec.Tolerations = []corev1.Toleration{{Key: consts.VirtualNodeTaintKey, Operator: corev1.TolerationOpExists}}
			if err := rome.Create(ctx, p); err != nil {
				t.Fatal(err)
			}
			if node := waitScheduled(ctx, t, rome, p); node == "milan" || node == "naples" {
				t.Errorf("pod %s runs on virtual node %s in a Local namespace", p.Name, node)
			}
		}
	})

	for _, ns := range []string{"policies", "policies-remote", "policies-local"} {
		if out, err := run(ctx, "unoffload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"]); err != nil {
			t.Errorf("unoffload %s: %v\n%s", ns, err, out)
		}
	}
}

// offloadWith creates ns and offloads it with liqoctl and the given flags,
// returning the twin namespace's name.
func offloadWith(ctx context.Context, t *testing.T, rome client.Client, ns string, flags ...string) string {
	t.Helper()
	createNamespace(t, ns)
	args := append([]string{"offload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"]}, flags...)
	if out, err := run(ctx, args...); err != nil {
		t.Fatalf("liqoctl offload namespace %s: %v\n%s", ns, err, out)
	}
	var nsof offv1beta1.NamespaceOffloading
	if err := rome.Get(ctx, types.NamespacedName{Namespace: ns, Name: "offloading"}, &nsof); err != nil {
		t.Fatal(err)
	}
	return nsof.Status.RemoteNamespaceName
}

// placementPod is a pod that requires label key=value of its node (key
// ending in "!": that the node lacks label key), or nothing if key is "".
func placementPod(ns, name, key, value string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
	}
	if key == "" {
		return p
	}
	req := corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpIn, Values: []string{value}}
	if k, ok := strings.CutSuffix(key, "!"); ok {
		req = corev1.NodeSelectorRequirement{Key: k, Operator: corev1.NodeSelectorOpDoesNotExist}
	}
	p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{req}}}}}}
	return p
}

// waitScheduled waits until the pod is bound and Running, and returns its
// node.
func waitScheduled(ctx context.Context, t *testing.T, c client.Client, p *corev1.Pod) string {
	t.Helper()
	harness.Eventually(ctx, t, "pod "+p.Name+" Running", func() (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(p), p)
		return err == nil && p.Status.Phase == corev1.PodRunning, err
	})
	return p.Spec.NodeName
}

// waitOffloadedTo waits until the pod's twin runs on provider.
func waitOffloadedTo(ctx context.Context, t *testing.T, rome client.Client, p *corev1.Pod, provider string) {
	t.Helper()
	_, remote, got := waitOffloaded(ctx, t, rome, p.Namespace, p.Name)
	if got != provider {
		t.Errorf("pod %s offloaded to %s, want %s", p.Name, got, provider)
	}
	if remote.Name != p.Name {
		t.Errorf("remote pod %s, want %s", remote.Name, p.Name)
	}
}

// waitEvent waits for an Event of reason on the pod.
func waitEvent(ctx context.Context, t *testing.T, ns, pod, reason string) {
	t.Helper()
	cs := tb.Cluster("rome").Client()
	harness.Eventually(ctx, t, "event "+reason+" on pod "+pod, func() (bool, error) {
		list, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("involvedObject.name", pod).String()})
		if err != nil {
			return false, err
		}
		for _, e := range list.Items {
			if e.Reason == reason {
				t.Logf("pod %s: %s: %s", pod, e.Reason, e.Message)
				return true, nil
			}
		}
		return false, nil
	})
}
