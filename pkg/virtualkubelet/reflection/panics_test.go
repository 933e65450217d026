package reflection

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/test/harness"
)

// bombs makes the reflection of chosen objects panic while they are armed
// (the test reflection's beforeReconcile).
type bombs struct{ armed sync.Map }

// testBombs is the beforeReconcile of the reflection TestMain starts.
var testBombs = &bombs{}

func bombKey(kind string, key types.NamespacedName) string { return kind + " " + key.String() }

func (b *bombs) arm(kind string, key types.NamespacedName) { b.armed.Store(bombKey(kind, key), true) }

func (b *bombs) disarm(kind string, key types.NamespacedName) { b.armed.Delete(bombKey(kind, key)) }

func (b *bombs) before(kind string, key types.NamespacedName) {
	if _, ok := b.armed.Load(bombKey(kind, key)); ok {
		panic("test bomb: " + bombKey(kind, key))
	}
}

// TestPanicsStayWithTheirObject: a ConfigMap and a pod whose reflection
// panics are counted, retried with backoff and reflected once the cause is
// gone, while the objects next to them are reflected all along: a panic
// used to take the whole process, every virtual node with it.
func TestPanicsStayWithTheirObject(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const ns = "panics"
	twin := offload(ctx, t, ns)
	badMap := types.NamespacedName{Namespace: ns, Name: "bomb"}
	badPod := types.NamespacedName{Namespace: ns, Name: "bomb-pod"}
	testBombs.arm(ConfigMaps, badMap)
	testBombs.arm(Pods, badPod)
	defer testBombs.disarm(ConfigMaps, badMap)
	defer testBombs.disarm(Pods, badPod)
	mapPanics := reflectionPanics.WithLabelValues(providerID, ConfigMaps)
	podPanics := reflectionPanics.WithLabelValues(providerID, Pods)
	mapsBefore, podsBefore := testutil.ToFloat64(mapPanics), testutil.ToFloat64(podPanics)

	for _, name := range []string{"bomb", "calm"} {
		if err := consumer.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Data: map[string]string{"name": name}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"bomb-pod", "calm-pod"} {
		if err := consumer.Create(ctx, testPod(ns, name)); err != nil {
			t.Fatal(err)
		}
	}
	at := func(name string) types.NamespacedName { return types.NamespacedName{Namespace: twin, Name: name} }
	waitFor[corev1.ConfigMap](ctx, t, "the ConfigMap next to the panicking one", at("calm"), nil)
	waitFor[offv1beta1.ShadowPod](ctx, t, "the ShadowPod of the pod next to the panicking one", at("calm-pod"), nil)
	harness.Eventually(ctx, t, "the panics counted", func() (bool, error) {
		return testutil.ToFloat64(mapPanics) > mapsBefore && testutil.ToFloat64(podPanics) > podsBefore, nil
	})
	var cm corev1.ConfigMap
	if err := provider.Get(ctx, at("bomb"), &cm); err == nil {
		t.Errorf("the panicking ConfigMap was reflected while its reflection panicked")
	}
	var sp offv1beta1.ShadowPod
	if err := provider.Get(ctx, at("bomb-pod"), &sp); err == nil {
		t.Errorf("the panicking pod got its ShadowPod while its reflection panicked")
	}

	// Still alive: an object created after the panics is reflected too.
	if err := consumer.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "later", Namespace: ns}}); err != nil {
		t.Fatal(err)
	}
	waitFor[corev1.ConfigMap](ctx, t, "a ConfigMap created after the panics", at("later"), nil)

	testBombs.disarm(ConfigMaps, badMap)
	testBombs.disarm(Pods, badPod)
	waitFor[corev1.ConfigMap](ctx, t, "the once-panicking ConfigMap, retried", at("bomb"), nil)
	waitFor[offv1beta1.ShadowPod](ctx, t, "the once-panicking pod's ShadowPod, retried", at("bomb-pod"), nil)
}
