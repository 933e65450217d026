package peering

import (
	"context"
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
)

// TestTwinNamespaces writes, with rome's own credentials on milan, the
// NamespaceMap rome's offloading controller will replicate, and checks that
// milan creates the twin namespaces with their quota and network policy,
// refuses one it did not create and names rome may not have, grants rome
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
			// milan's namespaces and another consumer's default name are not
			// rome's to ask for; "taken" is refused for its name, before
			// milan says whether it exists.
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
	for local, reason := range map[string]string{"same": offloading.ReasonNotAllowed, "taken": offloading.ReasonAlreadyExists,
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
// under EnforceSameName to milan, which does not allow the name: rome's
// NamespaceOffloading and liqoctl say why, and milan creates nothing.
func TestTwinNameRefusedShowsOnOffloading(t *testing.T) {
	peer(t, "rome", "milan")
	ctx := context.Background()
	createNamespace(t, "monitoring")
	out, err := run(ctx, "offload", "namespace", "monitoring", "--kubeconfig", kubeconfigs["rome"],
		"--namespace-mapping-strategy", "EnforceSameName", "--selector", "liqo.io/remote-cluster-id=milan", "--timeout", "30s")
	if err == nil || !strings.Contains(err.Error(), "phase AllFailed") || !strings.Contains(err.Error(), "milan: "+offloading.ReasonNotAllowed) ||
		!strings.Contains(err.Error(), "--allowed-twin-namespaces") {
		t.Fatalf("want AllFailed with milan: %s naming the provider's allow-list, got %v\n%s", offloading.ReasonNotAllowed, err, out)
	}
	nsof := getOffloading(t, clusterClient(t, "rome"), "monitoring")
	checkCondition(t, nsof, "milan", offv1beta1.NamespaceReady, corev1.ConditionFalse, offloading.ReasonNotAllowed)
	if _, err := tb.Cluster("milan").Client().CoreV1().Namespaces().Get(ctx, "monitoring", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("milan has namespace monitoring (%v)", err)
	}
	if out, err := run(ctx, "unoffload", "namespace", "monitoring", "--kubeconfig", kubeconfigs["rome"], "--timeout", "1m"); err != nil {
		t.Errorf("unoffload: %v\n%s", err, out)
	}
}
