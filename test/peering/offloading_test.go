package peering

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager/offloading"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
)

// seedOffloading is the NamespaceOffloading of the user's guide (seed 003),
// verbatim.
const seedOffloading = `apiVersion: offloading.liqo.io/v1beta1
kind: NamespaceOffloading
metadata:
  name: offloading
  namespace: default
spec:
  namespaceMappingStrategy: DefaultName
  podOffloadingStrategy: LocalAndRemote
  clusterSelector:
    nodeSelectorTerms: []
`

// TestOffloading is one story on rome, consumer of milan and naples: the
// guide's manifest, a new peering joining an offloaded namespace, a cluster
// selector, the documented failures, and unoffload, through kubectl and
// liqoctl.
func TestOffloading(t *testing.T) {
	ctx := context.Background()
	rome := clusterClient(t, "rome")
	twinName := func(ns string) string { return ns + "-rome" }

	t.Run("the guide's manifest offloads to every provider, including one peered later", func(t *testing.T) {
		peer(t, "rome", "milan")
		kubectl(t, "rome", seedOffloading, "apply", "-f", "-")
		nsof := waitPhase(t, rome, "default", offv1beta1.ReadyOffloadingPhase)
		if nsof.Status.RemoteNamespaceName != twinName("default") {
			t.Errorf("status.remoteNamespaceName = %q, want %q", nsof.Status.RemoteNamespaceName, twinName("default"))
		}
		// naples peers afterwards: the offloading picks it up.
		peer(t, "rome", "naples", "--cpu=2", "--memory=4Gi", "--pods=20")
		nsof = waitOffloading(t, rome, "default", "Ready on milan and naples", func(n *offv1beta1.NamespaceOffloading) bool {
			return n.Status.OffloadingPhase == offv1beta1.ReadyOffloadingPhase && len(n.Status.RemoteNamespacesConditions) == 2
		})
		for _, p := range []string{"milan", "naples"} {
			checkCondition(t, nsof, p, offv1beta1.NamespaceOffloadingRequired, corev1.ConditionTrue, offloading.ReasonSelected)
			checkCondition(t, nsof, p, offv1beta1.NamespaceReady, corev1.ConditionTrue, offloading.ReasonCreated)
			checkTwin(t, p, twinName("default"))
		}
		if c := readyOf(nsof); c == nil || c.Status != metav1.ConditionTrue || nsof.Status.ObservedGeneration != nsof.Generation {
			t.Errorf("Ready condition %+v, observedGeneration %d of %d", c, nsof.Status.ObservedGeneration, nsof.Generation)
		}
		checkSchedulingLabel(t, "default", true)
		// The map the pod reflection reads says where the twin is.
		var m offv1beta1.NamespaceMap
		if err := rome.Get(ctx, consts.NamespaceMapKey("milan"), &m); err != nil {
			t.Fatal(err)
		}
		if got := m.Status.CurrentMapping["default"]; got.RemoteNamespace != twinName("default") || got.Phase != offv1beta1.MappingAccepted {
			t.Errorf("rome's NamespaceMap for milan reports %+v", got)
		}
	})

	t.Run("a cluster selector matching one provider", func(t *testing.T) {
		createNamespace(t, "tour")
		out, err := run(ctx, "offload", "namespace", "tour", "--kubeconfig", kubeconfigs["rome"], "--selector", "tier=gold", "--timeout", "30s")
		if err != nil {
			t.Fatalf("liqoctl offload: %v\n%s", err, out)
		}
		if !strings.Contains(out, "INFO: Offloading of namespace tour correctly enabled: twin namespace tour-rome on milan\n") {
			t.Errorf("unexpected output:\n%s", out)
		}
		checkTwin(t, "milan", twinName("tour"))
		if _, err := tb.Cluster("naples").Client().CoreV1().Namespaces().Get(ctx, twinName("tour"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("naples, not selected, has the twin: %v", err)
		}
		nsof := getOffloading(t, rome, "tour")
		checkCondition(t, nsof, "naples", offv1beta1.NamespaceOffloadingRequired, corev1.ConditionFalse, offloading.ReasonNotSelected)
		// Offloading again with the same settings changes nothing.
		if out, err := run(ctx, "offload", "namespace", "tour", "--kubeconfig", kubeconfigs["rome"], "--selector", "tier=gold"); err != nil {
			t.Errorf("offloading again: %v\n%s", err, out)
		}
		// Another mapping strategy is refused (the twins' names would change);
		// another selector and pod strategy change in place.
		if out, err := run(ctx, "offload", "namespace", "tour", "--kubeconfig", kubeconfigs["rome"], "--selector", "tier=gold",
			"--namespace-mapping-strategy", "EnforceSameName"); err == nil || !strings.Contains(err.Error(), "unoffload") {
			t.Errorf("offloading with another mapping strategy: want an error naming unoffload, got %v\n%s", err, out)
		}
		if out, err := kubectlErr("rome", "", "patch", "namespaceoffloading", "offloading", "-n", "tour", "--type=merge",
			"-p", `{"spec":{"namespaceMappingStrategy":"EnforceSameName"}}`); err == nil || !strings.Contains(out, "namespaceMappingStrategy is immutable") {
			t.Errorf("patching the mapping strategy: want it refused as immutable, got %v\n%s", err, out)
		}
		out, err = run(ctx, "offload", "namespace", "tour", "--kubeconfig", kubeconfigs["rome"], "--pod-offloading-strategy", "Remote", "--timeout", "30s")
		if err != nil || !strings.Contains(out, "updated") {
			t.Fatalf("offloading again with every cluster and Remote pods: want an in-place update, got %v\n%s", err, out)
		}
		checkTwin(t, "naples", twinName("tour"))
		nsof = waitOffloading(t, rome, "tour", "both clusters selected", func(n *offv1beta1.NamespaceOffloading) bool {
			return n.Spec.PodOffloadingStrategy == offv1beta1.RemotePodOffloadingStrategy && n.Status.OffloadingPhase == offv1beta1.ReadyOffloadingPhase &&
				len(n.Status.RemoteNamespacesConditions) == 2
		})
		checkCondition(t, nsof, "naples", offv1beta1.NamespaceOffloadingRequired, corev1.ConditionTrue, offloading.ReasonSelected)
		// Back to milan only: naples loses its twin.
		if out, err := run(ctx, "offload", "namespace", "tour", "--kubeconfig", kubeconfigs["rome"], "--selector", "tier=gold",
			"--pod-offloading-strategy", "Remote", "--timeout", "30s"); err != nil {
			t.Fatalf("selecting milan again: %v\n%s", err, out)
		}
		harness.Eventually(ctx, t, "naples' twin of tour removed once deselected", func() (bool, error) {
			_, err := tb.Cluster("naples").Client().CoreV1().Namespaces().Get(ctx, twinName("tour"), metav1.GetOptions{})
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
		checkTwin(t, "milan", twinName("tour"))
	})

	t.Run("a remote name over 63 characters fails on every cluster", func(t *testing.T) {
		long := strings.Repeat("l", 60)
		createNamespace(t, long)
		out, err := run(ctx, "offload", "namespace", long, "--kubeconfig", kubeconfigs["rome"], "--timeout", "30s")
		if err == nil || !strings.Contains(err.Error(), "phase AllFailed") || !strings.Contains(err.Error(), offloading.ReasonNameTooLong) {
			t.Fatalf("want AllFailed with %s, got %v\n%s", offloading.ReasonNameTooLong, err, out)
		}
		nsof := getOffloading(t, rome, long)
		for _, p := range []string{"milan", "naples"} {
			checkCondition(t, nsof, p, offv1beta1.NamespaceReady, corev1.ConditionFalse, offloading.ReasonNameTooLong)
		}
	})

	t.Run("EnforceSameName against a provider's own namespace", func(t *testing.T) {
		naples := tb.Cluster("naples").Client()
		if _, err := naples.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shared-name"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		createNamespace(t, "shared-name")
		out, err := run(ctx, "offload", "namespace", "shared-name", "--kubeconfig", kubeconfigs["rome"],
			"--namespace-mapping-strategy", "EnforceSameName", "--timeout", "30s")
		if err == nil || !strings.Contains(err.Error(), "phase SomeFailed") || !strings.Contains(err.Error(), "naples: "+offloading.ReasonAlreadyExists) {
			t.Fatalf("want SomeFailed with naples: %s, got %v\n%s", offloading.ReasonAlreadyExists, err, out)
		}
		nsof := getOffloading(t, rome, "shared-name")
		checkCondition(t, nsof, "milan", offv1beta1.NamespaceReady, corev1.ConditionTrue, offloading.ReasonCreated)
		checkTwin(t, "milan", "shared-name")
		ns, err := naples.CoreV1().Namespaces().Get(ctx, "shared-name", metav1.GetOptions{})
		if err != nil || ns.Labels[consts.ManagedByLabel] != "" || !ns.DeletionTimestamp.IsZero() {
			t.Errorf("naples' own namespace was touched: %v %v", ns.Labels, err)
		}
	})

	t.Run("a cluster selector with a syntax error selects nothing", func(t *testing.T) {
		createNamespace(t, "bad-selector")
		nsof := &offv1beta1.NamespaceOffloading{ObjectMeta: metav1.ObjectMeta{Name: offv1beta1.NamespaceOffloadingName, Namespace: "bad-selector"},
			Spec: offv1beta1.NamespaceOffloadingSpec{ClusterSelector: corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "cores", Operator: corev1.NodeSelectorOpGt, Values: []string{"a", "b"}}}}}}}}
		if err := rome.Create(ctx, nsof); err != nil {
			t.Fatal(err)
		}
		nsof = waitPhase(t, rome, "bad-selector", offv1beta1.NoClusterSelectedOffloadingPhase)
		checkCondition(t, nsof, "milan", offv1beta1.NamespaceOffloadingRequired, corev1.ConditionFalse, offloading.ReasonInvalidSelector)
		if nsof.Annotations[consts.ClusterSelectorErrorAnnotation] == "" {
			t.Errorf("no %s annotation: %v", consts.ClusterSelectorErrorAnnotation, nsof.Annotations)
		}
	})

	t.Run("unoffload does not wait for an unreachable provider, which cleans up once back", func(t *testing.T) {
		createNamespace(t, "outage")
		if out, err := run(ctx, "offload", "namespace", "outage", "--kubeconfig", kubeconfigs["rome"], "--timeout", "30s"); err != nil {
			t.Fatalf("liqoctl offload: %v\n%s", err, out)
		}
		naples := tb.Cluster("naples")
		naples.StopComponent(testbed.APIServer)
		start := time.Now()
		out, err := run(ctx, "unoffload", "namespace", "outage", "--kubeconfig", kubeconfigs["rome"], "--timeout", "30s")
		if err != nil {
			t.Fatalf("liqoctl unoffload with naples down: %v\n%s", err, out)
		}
		t.Logf("unoffload with naples down took %s", time.Since(start).Round(time.Millisecond))
		events, err := tb.Cluster("rome").Client().CoreV1().Events("outage").List(ctx, metav1.ListOptions{FieldSelector: "reason=GaveUpWaiting"})
		if err != nil || len(events.Items) == 0 || !strings.Contains(events.Items[0].Message, "naples") {
			t.Errorf("no GaveUpWaiting event naming naples: %v %v", events, err)
		}
		startAPIServer(t, "naples")
		waitManager("naples")
		deadline := time.Now().Add(30 * time.Second)
		for {
			ns, err := naples.Client().CoreV1().Namespaces().Get(ctx, twinName("outage"), metav1.GetOptions{})
			if err != nil || !ns.DeletionTimestamp.IsZero() {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the twin on naples was not removed once naples was back")
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("twin removed from naples %s after it came back", time.Since(start).Round(time.Millisecond))
	})

	t.Run("unoffload removes twins, label and finalizer", func(t *testing.T) {
		for _, ns := range []string{"default", "tour", strings.Repeat("l", 60), "shared-name", "bad-selector"} {
			out, err := run(ctx, "unoffload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"], "--timeout", "30s")
			if err != nil {
				t.Fatalf("liqoctl unoffload namespace %s: %v\n%s", ns, err, out)
			}
			if !strings.Contains(out, "INFO: Offloading of namespace "+ns+" correctly disabled") {
				t.Errorf("unexpected output:\n%s", out)
			}
			checkSchedulingLabel(t, ns, false)
		}
		for p, twins := range map[string][]string{"milan": {twinName("default"), twinName("tour"), "shared-name"}, "naples": {twinName("default")}} {
			for _, twin := range twins {
				ns, err := tb.Cluster(p).Client().CoreV1().Namespaces().Get(ctx, twin, metav1.GetOptions{})
				if err == nil && ns.DeletionTimestamp.IsZero() {
					t.Errorf("twin %s on %s survived the unoffload", twin, p)
				}
			}
		}
		if ns, err := tb.Cluster("naples").Client().CoreV1().Namespaces().Get(ctx, "shared-name", metav1.GetOptions{}); err != nil || !ns.DeletionTimestamp.IsZero() {
			t.Errorf("unoffload removed naples' own namespace: %v", err)
		}
		// The maps' status follows their spec asynchronously: a twin whose
		// creation failed (naples' own shared-name) leaves its entry once
		// the controller has seen the spec without it.
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		for _, p := range []string{"milan", "naples"} {
			var m offv1beta1.NamespaceMap
			harness.Eventually(wctx, t, "rome's NamespaceMap for "+p+" mapping nothing", func() (bool, error) {
				if err := rome.Get(wctx, consts.NamespaceMapKey(p), &m); err != nil {
					return false, err
				}
				if len(m.Spec.DesiredMapping) > 0 || len(m.Status.CurrentMapping) > 0 {
					return false, fmt.Errorf("desired %v, current %v", m.Spec.DesiredMapping, m.Status.CurrentMapping)
				}
				return true, nil
			})
		}
		if out, err := run(ctx, "unoffload", "namespace", "tour", "--kubeconfig", kubeconfigs["rome"]); err != nil || !strings.Contains(out, "is not offloaded") {
			t.Errorf("unoffloading again: %v\n%s", err, out)
		}
	})
}

// kubectl runs the cluster's kubectl with stdin and returns its output.
func kubectl(t *testing.T, cluster, stdin string, args ...string) string {
	t.Helper()
	out, err := kubectlErr(cluster, stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %v: %v\n%s", args, err, out)
	}
	return out
}

// kubectlErr runs kubectl on cluster and returns its output and error.
func kubectlErr(cluster, stdin string, args ...string) (string, error) {
	cmd := exec.Command(tb.Cluster(cluster).KubectlPath(), append([]string{"--kubeconfig", kubeconfigs[cluster]}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func createNamespace(t *testing.T, name string) {
	t.Helper()
	_, err := tb.Cluster("rome").Client().CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

func getOffloading(t *testing.T, c client.Client, ns string) *offv1beta1.NamespaceOffloading {
	t.Helper()
	var nsof offv1beta1.NamespaceOffloading
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: offv1beta1.NamespaceOffloadingName}, &nsof); err != nil {
		t.Fatal(err)
	}
	return &nsof
}

func waitOffloading(t *testing.T, c client.Client, ns, what string, ok func(*offv1beta1.NamespaceOffloading) bool) *offv1beta1.NamespaceOffloading {
	t.Helper()
	var nsof offv1beta1.NamespaceOffloading
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: offv1beta1.NamespaceOffloadingName}, &nsof)
		if err == nil && ok(&nsof) {
			return &nsof
		}
		if time.Now().After(deadline) {
			t.Fatalf("NamespaceOffloading of %s never reached %s (error %v): %+v", ns, what, err, nsof.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func waitPhase(t *testing.T, c client.Client, ns string, phase offv1beta1.OffloadingPhase) *offv1beta1.NamespaceOffloading {
	t.Helper()
	return waitOffloading(t, c, ns, "phase "+string(phase), func(n *offv1beta1.NamespaceOffloading) bool {
		return n.Status.OffloadingPhase == phase && n.Status.ObservedGeneration == n.Generation
	})
}

func checkCondition(t *testing.T, nsof *offv1beta1.NamespaceOffloading, cluster string, typ offv1beta1.RemoteNamespaceConditionType, status corev1.ConditionStatus, reason string) {
	t.Helper()
	for _, c := range nsof.Status.RemoteNamespacesConditions[cluster] {
		if c.Type == typ {
			if c.Status != status || c.Reason != reason {
				t.Errorf("%s of %s on %s: %s/%s (%s), want %s/%s", typ, nsof.Namespace, cluster, c.Status, c.Reason, c.Message, status, reason)
			}
			return
		}
	}
	t.Errorf("%s of %s has no %s condition for %s: %+v", nsof.Namespace, cluster, typ, cluster, nsof.Status.RemoteNamespacesConditions)
}

func readyOf(nsof *offv1beta1.NamespaceOffloading) *metav1.Condition {
	for i := range nsof.Status.Conditions {
		if nsof.Status.Conditions[i].Type == offloading.ReadyCondition {
			return &nsof.Status.Conditions[i]
		}
	}
	return nil
}

// checkTwin checks that provider has the twin namespace, made for rome.
func checkTwin(t *testing.T, provider, name string) {
	t.Helper()
	ns, err := tb.Cluster(provider).Client().CoreV1().Namespaces().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Errorf("twin namespace %s on %s: %v", name, provider, err)
		return
	}
	if ns.Labels["liqo.io/twin-namespace"] != "true" || ns.Labels[consts.RemoteClusterIDLabel] != "rome" {
		t.Errorf("twin namespace %s on %s has labels %v", name, provider, ns.Labels)
	}
}

func checkSchedulingLabel(t *testing.T, ns string, want bool) {
	t.Helper()
	got, err := tb.Cluster("rome").Client().CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if has := got.Labels[consts.SchedulingEnabledLabel] == "true"; has != want {
		t.Errorf("namespace %s: label %s=true present %v, want %v", ns, consts.SchedulingEnabledLabel, has, want)
	}
}

// TestOffloadNsSelector: offload and unoffload namespace --ns-selector act
// on every namespace of rome the label selector matches, and on no other;
// -o prints one manifest per namespace; a selector matching none fails.
func TestOffloadNsSelector(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	peer(t, "rome", "milan")
	rome := clusterClient(t, "rome")
	cs := tb.Cluster("rome").Client().CoreV1().Namespaces()
	for name, labels := range map[string]map[string]string{"sel-a": {"team": "sel"}, "sel-b": {"team": "sel"}, "sel-c": {"team": "other"}} {
		if _, err := cs.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}
	base := []string{"--kubeconfig", kubeconfigs["rome"], "--timeout", "90s"}

	out, err := run(ctx, append([]string{"offload", "namespace", "--ns-selector", "team=sel", "-o", "yaml"}, base...)...)
	if err != nil || strings.Count(out, "kind: NamespaceOffloading") != 2 || !strings.Contains(out, "\n---\n") ||
		!strings.Contains(out, "namespace: sel-a") || !strings.Contains(out, "namespace: sel-b") {
		t.Errorf("-o yaml: %v\n%s", err, out)
	}
	if err := rome.Get(ctx, types.NamespacedName{Namespace: "sel-a", Name: offv1beta1.NamespaceOffloadingName}, &offv1beta1.NamespaceOffloading{}); !apierrors.IsNotFound(err) {
		t.Errorf("-o applied the NamespaceOffloading: %v", err)
	}

	out, err = run(ctx, append([]string{"offload", "namespace", "--ns-selector", "team=sel", "--pod-offloading-strategy", "Remote"}, base...)...)
	if err != nil || !strings.Contains(out, `selects 2 namespaces: [sel-a sel-b]`) {
		t.Fatalf("offload --ns-selector: %v\n%s", err, out)
	}
	for _, ns := range []string{"sel-a", "sel-b"} {
		if nsof := getOffloading(t, rome, ns); nsof.Spec.PodOffloadingStrategy != offv1beta1.RemotePodOffloadingStrategy || nsof.Status.OffloadingPhase != offv1beta1.ReadyOffloadingPhase {
			t.Errorf("%s: %+v", ns, nsof.Status)
		}
		checkTwin(t, "milan", ns+"-rome")
	}
	if err := rome.Get(ctx, types.NamespacedName{Namespace: "sel-c", Name: offv1beta1.NamespaceOffloadingName}, &offv1beta1.NamespaceOffloading{}); !apierrors.IsNotFound(err) {
		t.Errorf("sel-c, not selected, is offloaded: %v", err)
	}

	if out, err := run(ctx, append([]string{"unoffload", "namespace", "--ns-selector", "team=sel"}, base...)...); err != nil {
		t.Fatalf("unoffload --ns-selector: %v\n%s", err, out)
	}
	for _, ns := range []string{"sel-a", "sel-b"} {
		if err := rome.Get(ctx, types.NamespacedName{Namespace: ns, Name: offv1beta1.NamespaceOffloadingName}, &offv1beta1.NamespaceOffloading{}); !apierrors.IsNotFound(err) {
			t.Errorf("%s is still offloaded: %v", ns, err)
		}
	}

	if out, err := run(ctx, append([]string{"offload", "namespace", "--ns-selector", "team=nobody"}, base...)...); err == nil || !strings.Contains(err.Error(), "no namespace matches") {
		t.Errorf("a selector matching nothing: %v\n%s", err, out)
	}
	if out, err := run(ctx, append([]string{"offload", "namespace", "sel-a", "--ns-selector", "team=sel"}, base...)...); err == nil || !strings.Contains(err.Error(), "not both") {
		t.Errorf("NAME and --ns-selector: %v\n%s", err, out)
	}
}
