package reflected_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager/offloading"
	"github.com/liqo-go/liqo/pkg/podsecurity"
	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
)

// makeTwin has the provider's TwinReconciler create (or update) the twin
// remote of consumer id's namespace local, as a replicated NamespaceMap
// asks, and returns the twin namespace.
func makeTwin(t *testing.T, r *offloading.TwinReconciler, id, local, remote string) *corev1.Namespace {
	t.Helper()
	ctx := context.Background()
	tenant := consts.TenantNamespace(id)
	if err := webhooktest.Cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tenant}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	webhooktest.EnsureTenant(t, id)
	m := &offv1beta1.NamespaceMap{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: tenant,
		Labels: map[string]string{consts.ReplicationLabel: "true"}},
		Spec: offv1beta1.NamespaceMapSpec{DesiredMapping: map[string]string{local: remote}}}
	if err := webhooktest.Cl.Create(ctx, m); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	webhooktest.ReconcileTwins(t, r, m)
	var ns corev1.Namespace
	if err := webhooktest.Cl.Get(ctx, types.NamespacedName{Name: remote}, &ns); err != nil {
		t.Fatal(err)
	}
	return &ns
}

// TestTwinNamespacePodSecurity checks the second line of defence: the twin
// namespaces the provider creates make the API server's Pod Security
// Admission enforce the baseline level, so that even a Pod the webhook did
// not see (an administrator's, or one created while the webhook was
// unregistered) cannot be privileged there.
func TestTwinNamespacePodSecurity(t *testing.T) {
	ctx := context.Background()
	r := webhooktest.TwinReconciler()
	ns := makeTwin(t, r, "phi", "shop", "shop-phi")
	wantLabels := func(ns *corev1.Namespace, level string) {
		t.Helper()
		for k, want := range map[string]string{"pod-security.kubernetes.io/enforce": level, "pod-security.kubernetes.io/enforce-version": "latest"} {
			if got := ns.Labels[k]; got != want {
				t.Errorf("twin namespace label %s = %q, want %q", k, got, want)
			}
		}
	}
	wantLabels(ns, "baseline")

	webhooktest.Eventually(t, "the twin's default ServiceAccount", func(ctx context.Context) (bool, error) {
		err := webhooktest.Cl.Get(ctx, types.NamespacedName{Namespace: ns.Name, Name: "default"}, &corev1.ServiceAccount{})
		return err == nil, err
	})
	privileged := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "privileged", Namespace: ns.Name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox",
			SecurityContext: &corev1.SecurityContext{Privileged: new(bool)}}}}}
	*privileged.Spec.Containers[0].SecurityContext.Privileged = true
	err := webhooktest.Cl.Create(ctx, privileged)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "violates PodSecurity") || !strings.Contains(err.Error(), "privileged") {
		t.Errorf("a privileged Pod in a twin namespace: err = %v, want Pod Security Admission's refusal", err)
	}
	plain := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: ns.Name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox"}}}}
	if err := webhooktest.Cl.Create(ctx, plain); err != nil {
		t.Errorf("a plain Pod in a twin namespace: %v", err)
	}

	// A provider choosing restricted relabels the twins it already has.
	r.PodSecurity = podsecurity.Restricted
	wantLabels(makeTwin(t, r, "phi", "shop", "shop-phi"), "restricted")
	plain.Name = "plain-restricted"
	if err := webhooktest.Cl.Create(ctx, plain); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `violates PodSecurity "restricted:latest"`) {
		t.Errorf("an unhardened Pod in a restricted twin: err = %v, want Pod Security Admission's refusal", err)
	}
}
