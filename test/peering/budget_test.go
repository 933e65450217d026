package peering

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager/auth"
	"github.com/liqo-go/liqo/pkg/webhook/budget"
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
	// milan's Tenant of rome shows the budget under pressure (the ledger
	// refuses what does not fit, so the usage stays at or just under the
	// limit), with a Warning.
	// The report is written from the ledger now and then: it may be a
	// ConfigMap or two behind the twin for a moment.
	full := tenantBudget(ctx, t, "an object budget under pressure, counting every reflected ConfigMap", func(s authv1beta1.ObjectBudgetUsage, c *metav1.Condition) bool {
		n := reflected()
		return c != nil && c.Status == metav1.ConditionTrue && s.UsedBytes.Value() >= int64(n*size) && s.UsedObjects >= int64(n)
	})
	if full.MaxBytes.Cmp(testTenantBytes) != 0 || full.UsedBytes.Value() < int64(reflected()*size) || full.UsedObjects < int64(reflected()) {
		t.Errorf("milan's Tenant of rome shows %+v with %d ConfigMaps of 900 KiB reflected, want them counted against 24Mi", full, reflected())
	}
	harness.Eventually(ctx, t, "a Warning Event on milan's Tenant of rome for its budget under pressure", func() (bool, error) {
		events, err := milan.CoreV1().Events(consts.TenantNamespace("rome")).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Kind == "Tenant" && e.Type == corev1.EventTypeWarning &&
				(e.Reason == auth.ReasonObjectBudgetNear || e.Reason == auth.ReasonObjectBudgetReached) {
				return true, nil
			}
		}
		return false, nil
	})

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
	// All reflected, in less room than before: the Tenant counts them and
	// its condition agrees with its numbers.
	tenantBudget(ctx, t, "the budget's usage of all the ConfigMaps left", func(s authv1beta1.ObjectBudgetUsage, c *metav1.Condition) bool {
		_, want := auth.BudgetStatus(budget.Usage{Bytes: s.UsedBytes.Value(), Objects: s.UsedObjects,
			MaxBytes: s.MaxBytes.Value(), MaxObjects: s.MaxObjects})
		return s.UsedBytes.Value() >= int64((count-8)*size) && s.UsedBytes.Cmp(full.UsedBytes) < 0 && c != nil && c.Reason == want.Reason
	})
}

// tenantBudget waits until milan's Tenant of rome shows an object budget
// that ok accepts (with its ObjectBudgetPressure condition, nil if none),
// and returns it.
func tenantBudget(ctx context.Context, t *testing.T, what string, ok func(authv1beta1.ObjectBudgetUsage, *metav1.Condition) bool) authv1beta1.ObjectBudgetUsage {
	t.Helper()
	var got authv1beta1.ObjectBudgetUsage
	harness.Eventually(ctx, t, "milan's Tenant of rome showing "+what, func() (bool, error) {
		var tn authv1beta1.Tenant
		if err := clusterClient(t, "milan").Get(ctx, types.NamespacedName{Namespace: consts.TenantNamespace("rome"), Name: "rome"}, &tn); err != nil {
			return false, err
		}
		if tn.Status.ObjectBudget == nil {
			return false, fmt.Errorf("no objectBudget in the status")
		}
		got = *tn.Status.ObjectBudget
		c := meta.FindStatusCondition(tn.Status.Conditions, authv1beta1.ObjectBudgetPressureCondition)
		if !ok(got, c) {
			return false, fmt.Errorf("objectBudget %+v, condition %+v", got, c)
		}
		return true, nil
	})
	return got
}
