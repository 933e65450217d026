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
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager/offloading"
	"github.com/liqo-go/liqo/test/harness"
)

// TestTwinNamespaces writes, with rome's own credentials on milan, the
// NamespaceMap rome's offloading controller will replicate, and checks that
// milan creates the twin namespaces with their quota and network policy,
// refuses those it did not create and names rome may not have, grants rome
// ShadowPods (not Pods) there, and removes twins no longer wanted.
func TestTwinNamespaces(t *testing.T) {
	peer(t, "rome", "milan")
	ctx := context.Background()
	cfg := credentials(t, "rome", "milan")
	asRome, err := client.New(cfg, client.Options{Scheme: apis.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	milan := tb.Cluster("milan").Client()
	// Namespaces milan's own users made, with names rome will ask for: one
	// of rome's pattern, one not.
	for _, name := range []string{"taken", "taken-rome"} {
		if _, err := milan.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// Without the origin label, rome's own replicator, which would delete a
	// replica that has no local original, leaves this hand-made map alone.
	m := &offv1beta1.NamespaceMap{ObjectMeta: metav1.ObjectMeta{Name: "rome", Namespace: consts.TenantNamespace("rome"),
		Labels: map[string]string{consts.ReplicationLabel: "true"}},
		Spec: offv1beta1.NamespaceMapSpec{DesiredMapping: map[string]string{"liqo-demo": "liqo-demo-rome", "same": "taken", "taken": "taken-rome",
			// A name milan reserves and another consumer's default name are
			// not rome's to ask for; existing namespaces are not rome's
			// either, whatever their name.
			"monitoring": "monitoring", "steal": "liqo-demo-naples"}}}
	if err := asRome.Create(ctx, m); err != nil {
		t.Fatalf("rome creating its NamespaceMap on milan: %v", err)
	}
	waitMap := func(what string, ok func(*offv1beta1.NamespaceMap) bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			if err := asRome.Get(ctx, client.ObjectKeyFromObject(m), m); err == nil && ok(m) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("NamespaceMap never reached %s: %+v", what, m.Status)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitMap("every entry decided", func(m *offv1beta1.NamespaceMap) bool {
		return len(m.Status.CurrentMapping) == len(m.Spec.DesiredMapping)
	})
	if got := m.Status.CurrentMapping["liqo-demo"]; got.Phase != offv1beta1.MappingAccepted || got.RemoteNamespace != "liqo-demo-rome" {
		t.Errorf("liqo-demo: %+v, want Accepted in liqo-demo-rome", got)
	}
	for local, reason := range map[string]string{"same": offloading.ReasonAlreadyExists, "taken": offloading.ReasonAlreadyExists,
		"monitoring": offloading.ReasonNotAllowed, "steal": offloading.ReasonNotAllowed} {
		got := m.Status.CurrentMapping[local]
		if got.Phase != offv1beta1.MappingCreationLoopBackOff || got.Reason != reason || !strings.Contains(got.Message, m.Spec.DesiredMapping[local]) {
			t.Errorf("%s → %s: %+v, want refused with %s", local, m.Spec.DesiredMapping[local], got, reason)
		}
	}
	for _, name := range []string{"taken", "taken-rome"} {
		if ns, err := milan.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{}); err != nil || len(ns.Labels) > 1 {
			t.Errorf("the foreign namespace %s was touched: %v %v", name, ns.Labels, err)
		}
	}
	for _, name := range []string{"monitoring", "liqo-demo-naples"} {
		if _, err := milan.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("milan has namespace %s (%v)", name, err)
		}
	}

	// The twin has its guards, which rome cannot remove.
	if _, err := milan.CoreV1().ResourceQuotas("liqo-demo-rome").Get(ctx, offloading.TwinQuotaName, metav1.GetOptions{}); err != nil {
		t.Errorf("the twin's ResourceQuota: %v", err)
	}
	np, err := milan.NetworkingV1().NetworkPolicies("liqo-demo-rome").Get(ctx, offloading.TwinNetworkPolicyName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the twin's NetworkPolicy: %v", err)
	}
	if err := asRome.Delete(ctx, np); !apierrors.IsForbidden(err) {
		t.Errorf("rome deleting its twin's NetworkPolicy: %v, want forbidden", err)
	}
	if err := asRome.Delete(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Namespace: "liqo-demo-rome", Name: offloading.TwinQuotaName}}); !apierrors.IsForbidden(err) {
		t.Errorf("rome deleting its twin's ResourceQuota: %v, want forbidden", err)
	}

	// rome may run ShadowPods in its twin, not Pods, and nothing in milan's own namespace.
	// The origin label is what milan's ShadowPod webhook checks and
	// accounts the pod by, as rome's pod reflection sets it.
	sp := &offv1beta1.ShadowPod{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: "liqo-demo-rome",
		Labels: map[string]string{consts.OriginClusterIDLabel: "rome"}},
		Spec: offv1beta1.ShadowPodSpec{Pod: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox"}}}}}
	if err := waitAllowed(func() error { return asRome.Create(ctx, sp) }); err != nil {
		t.Errorf("rome creating a ShadowPod in its twin namespace: %v", err)
	}
	// milan's ShadowPod controller runs the pod.
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := &offv1beta1.ShadowPod{}
		if err := asRome.Get(ctx, client.ObjectKeyFromObject(sp), got); err == nil && got.Status.Phase == corev1.PodRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ShadowPod's pod never ran on milan")
		}
		time.Sleep(200 * time.Millisecond)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "direct", Namespace: "liqo-demo-rome"}, Spec: sp.Spec.Pod}
	if err := asRome.Create(ctx, pod); err == nil {
		t.Errorf("rome created a Pod directly in its twin namespace")
	}
	sp2 := sp.DeepCopy()
	sp2.Namespace, sp2.ResourceVersion = "taken", ""
	if err := asRome.Create(ctx, sp2); err == nil {
		t.Errorf("rome created a ShadowPod in a namespace that is not its twin")
	}

	// Dropping the entry removes the twin.
	delete(m.Spec.DesiredMapping, "liqo-demo")
	if err := asRome.Update(ctx, m); err != nil {
		t.Fatal(err)
	}
	waitMap("liqo-demo dropped", func(m *offv1beta1.NamespaceMap) bool { _, ok := m.Status.CurrentMapping["liqo-demo"]; return !ok })
	deadline = time.Now().Add(60 * time.Second)
	for {
		ns, err := milan.CoreV1().Namespaces().Get(ctx, "liqo-demo-rome", metav1.GetOptions{})
		if err != nil || !ns.DeletionTimestamp.IsZero() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("twin namespace liqo-demo-rome not deleted")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := asRome.Delete(ctx, m); err != nil {
		t.Fatal(err)
	}
}

// waitAllowed retries a call while the new RoleBinding reaches the
// authorizer's cache.
func waitAllowed(call func() error) error {
	var err error
	for range 50 {
		if err = call(); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// TestTwinNameRefusedShowsOnOffloading offloads, on rome, a namespace
// under EnforceSameName to milan, which reserves the name (monitoring, of
// the default --reserved-twin-namespaces): rome's NamespaceOffloading,
// an Event on it, and liqoctl say why, and milan creates nothing.
func TestTwinNameRefusedShowsOnOffloading(t *testing.T) {
	peer(t, "rome", "milan")
	ctx := context.Background()
	createNamespace(t, "monitoring")
	out, err := run(ctx, "offload", "namespace", "monitoring", "--kubeconfig", kubeconfigs["rome"],
		"--namespace-mapping-strategy", "EnforceSameName", "--selector", "liqo.io/remote-cluster-id=milan", "--timeout", "30s")
	if err == nil || !strings.Contains(err.Error(), "phase AllFailed") || !strings.Contains(err.Error(), "milan: "+offloading.ReasonNotAllowed) ||
		!strings.Contains(err.Error(), "--reserved-twin-namespaces") {
		t.Fatalf("want AllFailed with milan: %s naming the provider's reserved list, got %v\n%s", offloading.ReasonNotAllowed, err, out)
	}
	nsof := getOffloading(t, clusterClient(t, "rome"), "monitoring")
	checkCondition(t, nsof, "milan", offv1beta1.NamespaceReady, corev1.ConditionFalse, offloading.ReasonNotAllowed)
	checkOffloadingEvent(ctx, t, "monitoring", "reserved")
	if _, err := tb.Cluster("milan").Client().CoreV1().Namespaces().Get(ctx, "monitoring", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("milan has namespace monitoring (%v)", err)
	}
	if out, err := run(ctx, "unoffload", "namespace", "monitoring", "--kubeconfig", kubeconfigs["rome"], "--timeout", "1m"); err != nil {
		t.Errorf("unoffload: %v\n%s", err, out)
	}
}

// checkOffloadingEvent waits for a Warning Event on the NamespaceOffloading
// of namespace ns on rome whose message names ns and says says.
func checkOffloadingEvent(ctx context.Context, t *testing.T, ns, says string) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	harness.Eventually(wctx, t, "a Warning Event on the NamespaceOffloading of "+ns+" saying "+says, func() (bool, error) {
		events, err := tb.Cluster("rome").Client().CoreV1().Events(ns).List(wctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Kind == "NamespaceOffloading" && e.Type == corev1.EventTypeWarning &&
				strings.Contains(e.Message, ns) && strings.Contains(e.Message, says) {
				return true, nil
			}
		}
		return false, nil
	})
}

// TestEnforceSameNameDefaultInstall follows the seed's tutorial (gslb):
// on a default install, "liqoctl offload namespace podinfo
// --namespace-mapping-strategy EnforceSameName" makes a twin podinfo on
// the provider, which unoffloading removes.
func TestEnforceSameNameDefaultInstall(t *testing.T) {
	peer(t, "rome", "milan")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rome := clusterClient(t, "rome")
	if twin := offloadWith(ctx, t, rome, "podinfo", "--namespace-mapping-strategy", "EnforceSameName",
		"--selector", "liqo.io/remote-cluster-id=milan", "--timeout", "1m"); twin != "podinfo" {
		t.Errorf("twin namespace %q, want podinfo", twin)
	}
	nsof := getOffloading(t, rome, "podinfo")
	checkCondition(t, nsof, "milan", offv1beta1.NamespaceReady, corev1.ConditionTrue, offloading.ReasonCreated)
	checkTwin(t, "milan", "podinfo")
	if out, err := run(ctx, "unoffload", "namespace", "podinfo", "--kubeconfig", kubeconfigs["rome"], "--timeout", "1m"); err != nil {
		t.Fatalf("unoffload: %v\n%s", err, out)
	}
	harness.Eventually(ctx, t, "the twin podinfo going from milan", func() (bool, error) {
		ns, err := tb.Cluster("milan").Client().CoreV1().Namespaces().Get(ctx, "podinfo", metav1.GetOptions{})
		return apierrors.IsNotFound(err) || err == nil && !ns.DeletionTimestamp.IsZero(), client.IgnoreNotFound(err)
	})
}

// TestTwinSquatting plays rome as a hostile consumer of milan on a default
// install. Through its own offloading controller (what its users see) and
// through a NamespaceMap written with its own credentials on milan (what
// the controller would never send), it asks for a namespace milan's
// administrator made, Kubernetes' and Liqo's namespaces, and names of
// milan's reserved list: each is refused with its reason, nothing is
// created, adopted or bound, and neither unoffloading nor unpeering
// deletes any of the namespaces rome did not get.
func TestTwinSquatting(t *testing.T) {
	peer(t, "rome", "milan")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	milan := tb.Cluster("milan").Client()
	rome := clusterClient(t, "rome")
	if _, err := milan.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "provider-app",
		Labels: map[string]string{"owner": "milan"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Existing namespaces of milan, which must stay as they are.
	existing := []string{"provider-app", "kube-system", "default"}
	before := map[string]map[string]string{}
	for _, name := range existing {
		ns, err := milan.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		before[name] = ns.Labels
	}

	// What rome's users see.
	for ns, c := range map[string]struct{ reason, says string }{
		"provider-app": {offloading.ReasonAlreadyExists, "already exists on cluster milan"},
		"flux-system":  {offloading.ReasonNotAllowed, "reserved"},
	} {
		createNamespace(t, ns)
		out, err := run(ctx, "offload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"],
			"--namespace-mapping-strategy", "EnforceSameName", "--selector", "liqo.io/remote-cluster-id=milan", "--timeout", "30s")
		if err == nil || !strings.Contains(err.Error(), "phase AllFailed") || !strings.Contains(err.Error(), "milan: "+c.reason) {
			t.Errorf("offloading %s: want AllFailed with milan: %s, got %v\n%s", ns, c.reason, err, out)
		}
		nsof := getOffloading(t, rome, ns)
		checkCondition(t, nsof, "milan", offv1beta1.NamespaceReady, corev1.ConditionFalse, c.reason)
		if r := readyOf(nsof); r == nil || !strings.Contains(r.Message, c.says) {
			t.Errorf("the Ready condition of %s: %+v, want it saying %q", ns, r, c.says)
		}
		checkOffloadingEvent(ctx, t, ns, c.says)
	}

	// What rome's controller would never send.
	asRome, err := client.New(credentials(t, "rome", "milan"), client.Options{Scheme: apis.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	hostile := map[string]struct{ remote, says string }{
		"a": {"provider-app", "already exists"},
		"b": {"kube-system", "kube-*"},
		"c": {"kube-foo", "kube-*"},
		"d": {"liqo-foo", "liqo-*"},
		"e": {"default", "reserved on every cluster"},
		"f": {"ingress-nginx", "--reserved-twin-namespaces"},
		"g": {"cert-manager", "--reserved-twin-namespaces"},
		"h": {"istio-system", "*-system"},
	}
	m := &offv1beta1.NamespaceMap{ObjectMeta: metav1.ObjectMeta{Name: "squat", Namespace: consts.TenantNamespace("rome"),
		Labels: map[string]string{consts.ReplicationLabel: "true"}}, Spec: offv1beta1.NamespaceMapSpec{DesiredMapping: map[string]string{}}}
	for local, h := range hostile {
		m.Spec.DesiredMapping[local] = h.remote
	}
	if err := asRome.Create(ctx, m); err != nil {
		t.Fatalf("rome writing its NamespaceMap on milan: %v", err)
	}
	harness.Eventually(ctx, t, "milan's answer to every entry", func() (bool, error) {
		err := asRome.Get(ctx, client.ObjectKeyFromObject(m), m)
		return err == nil && len(m.Status.CurrentMapping) == len(hostile), err
	})
	for local, h := range hostile {
		got := m.Status.CurrentMapping[local]
		if got.Phase != offv1beta1.MappingCreationLoopBackOff || got.Reason == "" || !strings.Contains(got.Message, h.remote) || !strings.Contains(got.Message, h.says) {
			t.Errorf("%s: %+v, want refused saying %q", h.remote, got, h.says)
		}
		if h.remote == "provider-app" || h.remote == "kube-system" || h.remote == "default" {
			continue
		}
		if _, err := milan.CoreV1().Namespaces().Get(ctx, h.remote, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("milan has namespace %s (%v)", h.remote, err)
		}
	}
	checkExisting := func(when string) {
		t.Helper()
		for _, name := range existing {
			ns, err := milan.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
			if err != nil || !ns.DeletionTimestamp.IsZero() || !maps.Equal(ns.Labels, before[name]) {
				t.Errorf("%s: milan's namespace %s is gone, going or relabelled (%v)", when, name, err)
				continue
			}
			rbs, err := milan.RbacV1().RoleBindings(name).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, rb := range rbs.Items {
				for _, s := range rb.Subjects {
					if s.Name == consts.ConsumerUser("rome") {
						t.Errorf("%s: rome is bound in milan's namespace %s by %s", when, name, rb.Name)
					}
				}
			}
		}
	}
	checkExisting("after the requests")

	// Unoffloading and dropping the map.
	for _, ns := range []string{"provider-app", "flux-system"} {
		if out, err := run(ctx, "unoffload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"], "--timeout", "1m"); err != nil {
			t.Errorf("unoffload %s: %v\n%s", ns, err, out)
		}
	}
	if err := asRome.Delete(ctx, m); err != nil {
		t.Fatal(err)
	}
	checkExisting("after unoffloading")

	// Unpeering, with the hostile map back in place: milan revokes what rome
	// obtained, and only that.
	m = &offv1beta1.NamespaceMap{ObjectMeta: metav1.ObjectMeta{Name: "squat", Namespace: m.Namespace, Labels: m.Labels}, Spec: m.Spec}
	if err := asRome.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	if out, err := run(ctx, "unpeer", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs["milan"]); err != nil {
		t.Fatalf("unpeer: %v\n%s", err, out)
	}
	t.Cleanup(func() { peer(t, "rome", "milan") })
	harness.Eventually(ctx, t, "rome's map revoked on milan", func() (bool, error) {
		err := milan.CoreV1().RESTClient().Get().AbsPath("/apis/offloading.liqo.io/v1beta1/namespaces", m.Namespace, "namespacemaps", m.Name).Do(ctx).Error()
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	checkExisting("after unpeering")
}
