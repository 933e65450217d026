package slices

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager/shadowpod"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
)

// setTenantCondition sets consumer id's Tenant's spec.tenantCondition.
func setTenantCondition(t *testing.T, namespace, name string, c authv1beta1.TenantCondition) {
	t.Helper()
	ctx := context.Background()
	var tn authv1beta1.Tenant
	if err := cl.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, &tn); err != nil {
		t.Fatal(err)
	}
	tn.Spec.TenantCondition = c
	if err := cl.Update(ctx, &tn); err != nil {
		t.Fatal(err)
	}
}

func decideSlice(t *testing.T, s *authv1beta1.ResourceSlice) *authv1beta1.ResourceSlice {
	t.Helper()
	ctx := context.Background()
	if _, err := provider().Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(s)}); err != nil {
		t.Fatal(err)
	}
	var got authv1beta1.ResourceSlice
	if err := cl.Get(ctx, client.ObjectKeyFromObject(s), &got); err != nil {
		t.Fatal(err)
	}
	return &got
}

func resourcesCondition(s *authv1beta1.ResourceSlice) authv1beta1.ResourceSliceCondition {
	for _, c := range s.Status.Conditions {
		if c.Type == authv1beta1.ResourceSliceResources {
			return c
		}
	}
	return authv1beta1.ResourceSliceCondition{}
}

// TestCordonedTenantGetsNoMore: a Cordoned tenant's bigger request leaves
// its slice with the grant it had (and its Quota with it), a new slice of
// a Cordoned tenant is denied naming the Tenant's field, and both are
// decided once the Tenant is Active again. Before, the condition was
// stored and ignored.
func TestCordonedTenantGetsNoMore(t *testing.T) {
	ctx := context.Background()
	waitNodeReady(t)

	tenant(t, "paris")
	granted := replica("paris", rl("1", "1Gi", "10"))
	if err := cl.Create(ctx, granted); err != nil {
		t.Fatal(err)
	}
	if got := decideSlice(t, granted); !accepted(got) {
		t.Fatalf("the first request of an Active tenant: %v", got.Status.Conditions)
	}
	setTenantCondition(t, consts.TenantNamespace("paris"), "paris", authv1beta1.TenantCordoned)
	if err := cl.Get(ctx, client.ObjectKeyFromObject(granted), granted); err != nil {
		t.Fatal(err)
	}
	granted.Spec.Resources = rl("1", "1Gi", "20")
	if err := cl.Update(ctx, granted); err != nil {
		t.Fatal(err)
	}
	got := decideSlice(t, granted)
	if !accepted(got) || !got.Status.Resources.Pods().Equal(resource.MustParse("10")) {
		t.Errorf("a Cordoned tenant's bigger request: accepted %v with %s, want its grant kept at 10 pods", accepted(got), authv1beta1.CanonicalResources(got.Status.Resources))
	}
	if got.Annotations[consts.DecidedAnnotation] == authv1beta1.CanonicalResources(authv1beta1.WithDefaultResources(rl("1", "1Gi", "20"))) {
		t.Errorf("a request withheld for a Cordoned tenant was marked decided")
	}
	var q offv1beta1.Quota
	if err := cl.Get(ctx, client.ObjectKeyFromObject(granted), &q); err != nil || !q.Spec.Resources.Pods().Equal(resource.MustParse("10")) {
		t.Errorf("the Cordoned tenant's Quota = %v (%v), want 10 pods kept", q.Spec.Resources, err)
	}

	tenant(t, "lyon")
	setTenantCondition(t, consts.TenantNamespace("lyon"), "lyon", authv1beta1.TenantCordoned)
	fresh := replica("lyon", rl("1", "1Gi", "10"))
	if err := cl.Create(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	got = decideSlice(t, fresh)
	c := resourcesCondition(got)
	if accepted(got) || c.Reason != ReasonTenantNotActive || c.Message != "the Tenant of consumer lyon is Cordoned (spec.tenantCondition): "+
		"no more resources are granted until it is Active again" {
		t.Errorf("a Cordoned tenant's new slice: %+v, want denied naming spec.tenantCondition", c)
	}
	if err := cl.Get(ctx, client.ObjectKeyFromObject(fresh), &offv1beta1.Quota{}); !apierrors.IsNotFound(err) {
		t.Errorf("a Quota for a Cordoned tenant's new slice: %v", err)
	}

	for _, id := range []string{"paris", "lyon"} {
		setTenantCondition(t, consts.TenantNamespace(id), id, authv1beta1.TenantActive)
	}
	if got := decideSlice(t, granted); !got.Status.Resources.Pods().Equal(resource.MustParse("20")) {
		t.Errorf("the request once Active again: %s, want 20 pods", authv1beta1.CanonicalResources(got.Status.Resources))
	}
	if got := decideSlice(t, fresh); !accepted(got) {
		t.Errorf("the new slice once Active again: %v", got.Status.Conditions)
	}
}

func shadowPodOf(name, namespace, origin string) *offv1beta1.ShadowPod {
	return &offv1beta1.ShadowPod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace,
		Labels: map[string]string{consts.OriginClusterIDLabel: origin}},
		Spec: offv1beta1.ShadowPodSpec{Pod: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox"}}}}}
}

// TestDrainedTenantLosesItsShadowPods: draining a Tenant evicts its
// consumer's ShadowPods with Events, and one appearing afterwards too; the
// other consumers' stay, even when a Tenant in a namespace not its own
// names their cluster and is Drained. The manager's cache trims the
// ShadowPods as the controller manager's does: one whose pod exists (b)
// keeps only its origin label.
func TestDrainedTenantLosesItsShadowPods(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	mgr, err := testbed.NewManager(cfg, cache.Options{ByObject: shadowpod.Caches(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&TenantStateReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	mctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = mgr.Start(mctx) }()

	tenant(t, "nice")
	for _, ns := range []string{"nice-work", "other-work", consts.TenantNamespace("evil")} {
		if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	// A Tenant naming consumer "other" outside other's tenant namespace.
	if err := cl.Create(ctx, &authv1beta1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: consts.TenantNamespace("evil")},
		Spec: authv1beta1.TenantSpec{ClusterID: corev1beta1.ClusterID("other"), TenantCondition: authv1beta1.TenantDrained}}); err != nil {
		t.Fatal(err)
	}
	for _, sp := range []*offv1beta1.ShadowPod{shadowPodOf("a", "nice-work", "nice"), shadowPodOf("b", "nice-work", "nice"),
		shadowPodOf("theirs", "other-work", "other")} {
		if err := cl.Create(ctx, sp); err != nil {
			t.Fatal(err)
		}
		if sp.Name == "b" {
			patch := client.MergeFrom(sp.DeepCopy())
			sp.Status.Phase = corev1.PodRunning
			meta.SetStatusCondition(&sp.Status.Conditions, metav1.Condition{Type: shadowpod.ConditionReady,
				Status: metav1.ConditionTrue, Reason: shadowpod.ReasonPodReady})
			if err := cl.Status().Patch(ctx, sp, patch); err != nil {
				t.Fatal(err)
			}
		}
	}

	harness.Eventually(ctx, t, "ShadowPod b trimmed in the manager's cache", func() (bool, error) {
		var cached offv1beta1.ShadowPod
		err := mgr.GetCache().Get(ctx, types.NamespacedName{Namespace: "nice-work", Name: "b"}, &cached)
		return err == nil && cached.Spec.Pod.Containers == nil, client.IgnoreNotFound(err)
	})

	setTenantCondition(t, consts.TenantNamespace("nice"), "nice", authv1beta1.TenantDrained)
	gone := func(ns, name string) func() (bool, error) {
		return func() (bool, error) {
			err := cl.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &offv1beta1.ShadowPod{})
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		}
	}
	harness.Eventually(ctx, t, "ShadowPod a evicted", gone("nice-work", "a"))
	harness.Eventually(ctx, t, "ShadowPod b evicted", gone("nice-work", "b"))
	harness.Eventually(ctx, t, "the eviction Event on the Tenant", func() (bool, error) {
		var events corev1.EventList
		if err := cl.List(ctx, &events, client.InNamespace(consts.TenantNamespace("nice"))); err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.Reason == ReasonShadowPodsEvicted && e.InvolvedObject.Name == "nice" {
				return e.Message == "evicted 2 ShadowPods of consumer nice: its Tenant is Drained (spec.tenantCondition)", nil
			}
		}
		return false, nil
	})
	harness.Eventually(ctx, t, "the Evicted Events on the ShadowPods", func() (bool, error) {
		var events corev1.EventList
		if err := cl.List(ctx, &events, client.InNamespace("nice-work")); err != nil {
			return false, err
		}
		n := 0
		for _, e := range events.Items {
			if e.Reason == ReasonEvicted {
				n++
			}
		}
		return n == 2, nil
	})

	late := shadowPodOf("late", "nice-work", "nice")
	if err := cl.Create(ctx, late); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(ctx, t, "a ShadowPod created after the drain evicted", gone("nice-work", "late"))
	if err := cl.Get(ctx, types.NamespacedName{Namespace: "other-work", Name: "theirs"}, &offv1beta1.ShadowPod{}); err != nil {
		t.Errorf("another consumer's ShadowPod, named by a Drained Tenant outside its tenant namespace: %v", err)
	}
}
