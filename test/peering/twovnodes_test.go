package peering

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
)

// TestTwoVirtualNodesOneProvider gives rome a second VirtualNode for milan,
// with the same credentials: each node runs its own pods, neither touches
// the other's, and the second node opens no watch of its own on milan: the
// twin namespaces' caches are the provider's, shared by its nodes.
func TestTwoVirtualNodesOneProvider(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// milan's watches are counted whoever opens them: its other consumer
	// (naples, which earlier tests peer) goes first, so that only rome's
	// count, and rome's slice gets what naples's held. Namespaces earlier
	// tests left offloaded get their twins again when rome peers anew, so
	// the counts are taken once they no longer change (stableWatches).
	if out, err := run(ctx, "unpeer", "--kubeconfig", kubeconfigs["naples"], "--remote-kubeconfig", kubeconfigs["milan"]); err != nil &&
		!strings.Contains(out, "no peering") && !strings.Contains(out, "not peered") {
		t.Logf("unpeering naples from milan: %v\n%s", err, out)
	}
	peer(t, "rome", "milan")
	rome, milan := clusterClient(t, "rome"), clusterClient(t, "milan")
	milanCS := tb.Cluster("milan").Client()
	ns := "twovnodes"
	twin := offloadWith(ctx, t, rome, ns, "--selector", consts.RemoteClusterIDLabel+"=milan", "--timeout", "60s")
	unoffloadAtEnd(t, ns)
	waitPhase(t, rome, ns, offv1beta1.ReadyOffloadingPhase)

	first := pinnedPod(ns, "on-first", "milan")
	if err := rome.Create(ctx, first); err != nil {
		t.Fatal(err)
	}
	waitPinnedRunning(ctx, t, rome, milan, first, twin)
	before := stableWatches(ctx, t, milanCS)
	t.Logf("namespace-scoped watches on milan with one virtual node: %v", before)

	// The second node: milan's VirtualNode again, under another name.
	var vn offv1beta1.VirtualNode
	if err := rome.Get(ctx, types.NamespacedName{Namespace: consts.TenantNamespace("milan"), Name: "milan"}, &vn); err != nil {
		t.Fatal(err)
	}
	second := &offv1beta1.VirtualNode{ObjectMeta: metav1.ObjectMeta{Name: "milan-second", Namespace: vn.Namespace, Labels: vn.Labels},
		Spec: *vn.Spec.DeepCopy()}
	second.Spec.CreateNode = ptr.To(true)
	if err := rome.Create(ctx, second); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := rome.Delete(ctx, second); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting the second VirtualNode: %v", err)
		}
		waitGoneNode(ctx, t, "rome", second.Name)
	})
	waitNode(t, "rome", second.Name, "Ready", testbed.NodeReady)
	other := pinnedPod(ns, "on-second", second.Name)
	if err := rome.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	waitPinnedRunning(ctx, t, rome, milan, other, twin)

	t.Run("each node keeps its pods and leaves the other's alone", func(t *testing.T) {
		// Long enough for either node's reflection to have handled the
		// other's ShadowPod and pod events several times over.
		time.Sleep(5 * time.Second)
		for _, p := range []*corev1.Pod{first, other} {
			waitPinnedRunning(ctx, t, rome, milan, p, twin)
			var sp offv1beta1.ShadowPod
			if err := milan.Get(ctx, types.NamespacedName{Namespace: twin, Name: p.Name}, &sp); err != nil {
				t.Errorf("ShadowPod of %s: %v", p.Name, err)
			} else if !sp.DeletionTimestamp.IsZero() {
				t.Errorf("ShadowPod of %s (node %s) is being deleted", p.Name, p.Spec.NodeName)
			}
		}
	})

	t.Run("the second node opens no watch of its own on the provider", func(t *testing.T) {
		after := stableWatches(ctx, t, milanCS)
		t.Logf("namespace-scoped watches on milan with two virtual nodes: %v", after)
		for resource, n := range after {
			if n > before[resource] {
				t.Errorf("%s: %d watches in namespaces with two virtual nodes, %d with one", resource, n, before[resource])
			}
		}
	})

	t.Run("a pod of the second node goes with its ShadowPod, the first node's stays", func(t *testing.T) {
		if err := rome.Delete(ctx, other); err != nil {
			t.Fatal(err)
		}
		harness.Eventually(ctx, t, "the ShadowPod of "+other.Name+" gone", func() (bool, error) {
			err := milan.Get(ctx, types.NamespacedName{Namespace: twin, Name: other.Name}, &offv1beta1.ShadowPod{})
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
		waitPinnedRunning(ctx, t, rome, milan, first, twin)
	})
}

// pinnedPod is a pod bound to node by name, as the scheduler would bind it,
// tolerating the virtual nodes' taint.
func pinnedPod(ns, name, node string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{NodeName: node,
			Tolerations: []corev1.Toleration{{Key: consts.VirtualNodeTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
			Containers:  []corev1.Container{{Name: "app", Image: "busybox", Command: []string{"sleep", "3600"}}}}}
}

// waitPinnedRunning waits until p runs on its virtual node and as a pod of
// the same name in twin on the provider.
func waitPinnedRunning(ctx context.Context, t *testing.T, rome, provider client.Client, p *corev1.Pod, twin string) {
	t.Helper()
	harness.Eventually(ctx, t, "pod "+p.Name+" Running on "+p.Spec.NodeName+" and remotely", func() (bool, error) {
		var local, remote corev1.Pod
		if err := rome.Get(ctx, client.ObjectKeyFromObject(p), &local); err != nil {
			return false, err
		}
		if err := provider.Get(ctx, types.NamespacedName{Namespace: twin, Name: p.Name}, &remote); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return local.Status.Phase == corev1.PodRunning && remote.Status.Phase == corev1.PodRunning, nil
	})
}

// namespacedWatches counts the namespace-scoped watches open on an API
// server, by resource: the consumer's caches of its twin and tenant
// namespaces are such watches, the provider's own controllers watch
// cluster-wide. Each figure is the highest of a few readings, a watch
// being renewed showing as a dip.
// stableWatches is namespacedWatches once three readings in a row, 3 s
// apart, agree (or after a minute, the last).
func stableWatches(ctx context.Context, t *testing.T, cs kubernetes.Interface) map[string]int {
	t.Helper()
	last, same := namespacedWatches(ctx, t, cs), 0
	for deadline := time.Now().Add(time.Minute); same < 2 && time.Now().Before(deadline); {
		time.Sleep(3 * time.Second)
		next := namespacedWatches(ctx, t, cs)
		if maps.Equal(next, last) {
			same++
		} else {
			same = 0
		}
		last = next
	}
	return last
}

func namespacedWatches(ctx context.Context, t *testing.T, cs kubernetes.Interface) map[string]int {
	t.Helper()
	out := map[string]int{}
	for range 4 {
		families, err := harness.APIServerMetrics(ctx, cs)
		if err != nil {
			t.Fatal(err)
		}
		reading := map[string]int{}
		for _, m := range families["apiserver_longrunning_requests"].GetMetric() {
			l := harness.Labels(m)
			if l["verb"] == "WATCH" && l["scope"] == "namespace" {
				reading[l["resource"]] += int(m.GetGauge().GetValue())
			}
		}
		for r, n := range reading {
			out[r] = max(out[r], n)
		}
		time.Sleep(500 * time.Millisecond)
	}
	return out
}
