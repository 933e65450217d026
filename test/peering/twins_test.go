package peering

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// TestTwinNamespaces writes, with rome's own credentials on milan, the
// NamespaceMap rome's offloading controller will replicate, and checks that
// milan creates the twin namespaces, refuses one it did not create, grants
// rome ShadowPods (not Pods) there, and removes twins no longer wanted.
func TestTwinNamespaces(t *testing.T) {
	peer(t, "rome", "milan")
	ctx := context.Background()
	cfg := credentials(t, "rome", "milan")
	asRome, err := client.New(cfg, client.Options{Scheme: apis.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	milan := tb.Cluster("milan").Client()
	// A namespace milan's own users made, with the name rome will ask for.
	if _, err := milan.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "taken"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Without the origin label, rome's own replicator, which would delete a
	// replica that has no local original, leaves this hand-made map alone.
	m := &offv1beta1.NamespaceMap{ObjectMeta: metav1.ObjectMeta{Name: "rome", Namespace: consts.TenantNamespace("rome"),
		Labels: map[string]string{consts.ReplicationLabel: "true"}},
		Spec: offv1beta1.NamespaceMapSpec{DesiredMapping: map[string]string{"liqo-demo": "liqo-demo-rome", "same": "taken"}}}
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
	waitMap("both entries decided", func(m *offv1beta1.NamespaceMap) bool { return len(m.Status.CurrentMapping) == 2 })
	if got := m.Status.CurrentMapping["liqo-demo"]; got.Phase != offv1beta1.MappingAccepted || got.RemoteNamespace != "liqo-demo-rome" {
		t.Errorf("liqo-demo: %+v, want Accepted in liqo-demo-rome", got)
	}
	if got := m.Status.CurrentMapping["same"]; got.Phase != offv1beta1.MappingCreationLoopBackOff {
		t.Errorf("a foreign namespace was accepted as a twin: %+v", got)
	}
	if ns, err := milan.CoreV1().Namespaces().Get(ctx, "taken", metav1.GetOptions{}); err != nil || len(ns.Labels) > 1 {
		t.Errorf("the foreign namespace was touched: %v %v", ns.Labels, err)
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
