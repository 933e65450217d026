package peering

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/test/harness"
)

// TestObjectBudgetEndToEnd is issue 30's exhaustion attack on a real
// peering: rome offloads a namespace to milan and keeps more ConfigMaps
// of 900 KiB in it than milan lets a consumer keep (24 MiB here). rome's
// own reflection copies them until milan's webhook refuses the rest, with
// an Event on each ConfigMap left out; milan's twin never holds more than
// the budget. With its Identity's credentials, rome then writes a Secret
// of its own choosing straight into the twin: refused (403), naming the
// rule. Deleting ConfigMaps on rome frees the room for the rest.
func TestObjectBudgetEndToEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	peer(t, "rome", "milan")
	const ns, count, size = "budget-hog", 32, 900 << 10
	twin := ns + "-rome"
	createNamespace(t, ns)
	if out, err := run(ctx, "offload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"],
		"--selector", "liqo.io/remote-cluster-id=milan", "--timeout", "60s"); err != nil {
		t.Fatalf("offloading %s: %v\n%s", ns, err, out)
	}
	t.Cleanup(func() {
		if out, err := run(context.Background(), "unoffload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"], "--timeout", "1m"); err != nil {
			t.Errorf("unoffload: %v\n%s", err, out)
		}
		_ = tb.Cluster("rome").Client().CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	rome, milan := tb.Cluster("rome").Client(), tb.Cluster("milan").Client()
	for i := range count {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("blob-", i), Namespace: ns},
			Data: map[string]string{"blob": strings.Repeat("x", size)}}
		if _, err := rome.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	// 24 MiB hold 27 of them, less what rome's other objects take.
	reflected := func() int {
		list, err := milan.CoreV1().ConfigMaps(twin).List(ctx, metav1.ListOptions{LabelSelector: consts.OriginClusterIDLabel + "=rome"})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, cm := range list.Items {
			if strings.HasPrefix(cm.Name, "blob-") {
				n++
			}
		}
		return n
	}
	harness.Eventually(ctx, t, "an Event on a ConfigMap milan refused for rome's byte budget", func() (bool, error) {
		events, err := rome.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Kind == "ConfigMap" && e.Type == corev1.EventTypeWarning && strings.Contains(e.Message, "bytes requested") &&
				strings.Contains(e.Message, "--max-tenant-object-bytes") {
				return true, nil
			}
		}
		return false, nil
	})
	if n := reflected(); n < 20 || n >= count || n*size > int(testTenantBytes.Value()) {
		t.Errorf("milan's twin holds %d of rome's %d ConfigMaps of 900 KiB, want as many as 24 MiB hold", n, count)
	}

	asRome, err := client.New(credentials(t, "rome", "milan"), client.Options{Scheme: apis.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	planted := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "planted", Namespace: twin, Labels: map[string]string{
		consts.ManagedByLabel: consts.ManagedByValue, consts.OriginClusterIDLabel: "rome"}}, Data: map[string][]byte{"k": make([]byte, size)}}
	err = asRome.Create(ctx, planted)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "offloading.tenantObjects.maxBytes") {
		t.Errorf("a Secret of 900 KiB written with rome's credentials over its budget: err = %v, want the webhook's refusal naming the rule", err)
	}

	// Room made on rome is room on milan: the rest follow.
	for i := range 8 {
		if err := rome.CoreV1().ConfigMaps(ns).Delete(ctx, fmt.Sprint("blob-", i), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	harness.Eventually(ctx, t, "the ConfigMaps left out reflected once room is made", func() (bool, error) {
		return reflected() == count-8, nil
	})
}
