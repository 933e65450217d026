package offloading

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/liqo-go/liqo/apis"
	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// TestTwinsRevokedOnUnpeer: a consumer whose Tenant is deleted (unpeered,
// by liqoctl or by the provider's administrator) while its tenant namespace
// stays (the reverse peering lives there) loses its maps, its twins, and
// with them its rights there; a consumer that never had a Tenant gets
// nothing from a map it put there.
func TestTwinsRevokedOnUnpeer(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	asAsti := newConsumer(ctx, t, "asti")
	m := putMap(ctx, t, asAsti, "asti", "asti", map[string]string{"shop": "shop-asti"})
	checkAccepted(t, waitDecided(ctx, t, asAsti, m), "shop", "shop-asti")
	if err := waitAllowed(ctx, func() error {
		return asAsti.List(ctx, &corev1.ConfigMapList{}, client.InNamespace("shop-asti"))
	}); err != nil {
		t.Fatalf("asti in its twin before unpeering: %v", err)
	}

	if err := admin.Delete(ctx, &authv1beta1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "asti", Namespace: consts.TenantNamespace("asti")}}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var maps offv1beta1.NamespaceMapList
		if err := admin.List(ctx, &maps, client.InNamespace(consts.TenantNamespace("asti"))); err != nil {
			return false, err
		}
		var ns corev1.Namespace
		err := admin.Get(ctx, types.NamespacedName{Name: "shop-asti"}, &ns)
		twinGoing := apierrors.IsNotFound(err) || err == nil && !ns.DeletionTimestamp.IsZero()
		return len(maps.Items) == 0 && twinGoing, nil
	})
	if err != nil {
		t.Fatalf("after the Tenant's deletion the map and the twin stayed: %v", err)
	}
	if err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		err := asAsti.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after", Namespace: "shop-asti"}})
		return err != nil, nil
	}); err != nil {
		t.Fatalf("asti still writes in its twin after unpeering: %v", err)
	}
	if err := admin.Get(ctx, types.NamespacedName{Name: consts.TenantNamespace("asti")}, &corev1.Namespace{}); err != nil {
		t.Errorf("the tenant namespace, which the reverse peering uses, went: %v", err)
	}

	// A map in the tenant namespace of a consumer without a Tenant.
	asBari := newConsumer(ctx, t, "bari")
	if err := admin.Delete(ctx, &authv1beta1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "bari", Namespace: consts.TenantNamespace("bari")}}); err != nil {
		t.Fatal(err)
	}
	nm := &offv1beta1.NamespaceMap{ObjectMeta: metav1.ObjectMeta{Name: "bari", Namespace: consts.TenantNamespace("bari"),
		Labels: map[string]string{consts.ReplicationLabel: "true"}},
		Spec: offv1beta1.NamespaceMapSpec{DesiredMapping: map[string]string{"shop": "shop-bari"}}}
	if err := asBari.Create(ctx, nm); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		err := admin.Get(ctx, client.ObjectKeyFromObject(nm), &offv1beta1.NamespaceMap{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		t.Fatalf("the map of a consumer without a Tenant stayed: %v", err)
	}
	if err := admin.Get(ctx, types.NamespacedName{Name: "shop-bari"}, &corev1.Namespace{}); !apierrors.IsNotFound(err) {
		t.Errorf("a twin was made for a consumer without a Tenant (%v)", err)
	}
}

// TestPeeredLooksPastAStaleCache: a map replicated right after peering can
// reach the controller before the consumer's new Tenant reaches its cache.
// Taken at its word, the cache would have the map and twins revoked (as
// under load in a CI run); the Tenant is looked for past it first. Pure
// logic: two fake readers stand for the stale cache and the API server.
func TestPeeredLooksPastAStaleCache(t *testing.T) {
	tenant := &authv1beta1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "asti", Namespace: consts.TenantNamespace("asti")},
		Spec: authv1beta1.TenantSpec{ClusterID: "asti"}}
	stale := fake.NewClientBuilder().WithScheme(apis.NewScheme()).Build()
	live := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(tenant).Build()
	for _, c := range []struct {
		name   string
		reader client.Reader
		want   bool
	}{
		{"the API server has the Tenant", live, true},
		{"neither has it", fake.NewClientBuilder().WithScheme(apis.NewScheme()).Build(), false},
	} {
		r := &TwinReconciler{Client: stale, Reader: c.reader}
		got, err := r.peered(t.Context(), "asti")
		if err != nil || got != c.want {
			t.Errorf("%s: peered = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}
