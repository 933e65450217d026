package webhook

import (
	"context"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager/offloading"
	"github.com/liqo-go/liqo/pkg/podsecurity"
)

// makeTwin has the provider's TwinReconciler create (or update) the twin
// remote of consumer id's namespace local, as a replicated NamespaceMap
// asks, and returns the twin namespace.
func makeTwin(t *testing.T, r *offloading.TwinReconciler, id, local, remote string) *corev1.Namespace {
	t.Helper()
	ctx := context.Background()
	tenant := consts.TenantNamespace(id)
	if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tenant}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	ensureTenant(t, id)
	m := &offv1beta1.NamespaceMap{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: tenant,
		Labels: map[string]string{consts.ReplicationLabel: "true"}},
		Spec: offv1beta1.NamespaceMapSpec{DesiredMapping: map[string]string{local: remote}}}
	if err := cl.Create(ctx, m); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	reconcileTwins(t, r, m)
	var ns corev1.Namespace
	if err := cl.Get(ctx, types.NamespacedName{Name: remote}, &ns); err != nil {
		t.Fatal(err)
	}
	return &ns
}

// ensureTenant makes the Tenant of consumer id, as peering does: its maps
// count only while it exists.
func ensureTenant(t *testing.T, id string) {
	t.Helper()
	tenant := &authv1beta1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: consts.TenantNamespace(id)},
		Spec: authv1beta1.TenantSpec{ClusterID: corev1beta1.ClusterID(id)}}
	if err := cl.Create(context.Background(), tenant); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// twinReconciler is the provider's TwinReconciler with its defaults.
func twinReconciler() *offloading.TwinReconciler {
	return &offloading.TwinReconciler{Client: cl, ClusterRole: "liqo-remote-offloading", Recorder: record.NewFakeRecorder(100),
		Options: offloading.DefaultTwinOptions()}
}

// reconcileTwins runs r on map m until it has accepted every entry: a twin
// is handed to its consumer once the quota controller enforces its
// ResourceQuota, which takes more than one pass.
func reconcileTwins(t *testing.T, r *offloading.TwinReconciler, m *offv1beta1.NamespaceMap) {
	t.Helper()
	eventually(t, "the twins of "+m.Name+" accepted", func(ctx context.Context) (bool, error) {
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(m)}); err != nil {
			return false, err
		}
		var got offv1beta1.NamespaceMap
		if err := cl.Get(ctx, client.ObjectKeyFromObject(m), &got); err != nil {
			return false, err
		}
		for local := range got.Spec.DesiredMapping {
			if st := got.Status.CurrentMapping[local]; st.Phase != offv1beta1.MappingAccepted {
				return false, fmt.Errorf("%s: %+v", local, st)
			}
		}
		return true, nil
	})
}

// TestTwinNamespacePodSecurity checks the second line of defence: the twin
// namespaces the provider creates make the API server's Pod Security
// Admission enforce the baseline level, so that even a Pod the webhook did
// not see (an administrator's, or one created while the webhook was
// unregistered) cannot be privileged there.
func TestTwinNamespacePodSecurity(t *testing.T) {
	ctx := context.Background()
	r := twinReconciler()
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

	eventually(t, "the twin's default ServiceAccount", func(ctx context.Context) (bool, error) {
		err := cl.Get(ctx, types.NamespacedName{Namespace: ns.Name, Name: "default"}, &corev1.ServiceAccount{})
		return err == nil, err
	})
	privileged := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "privileged", Namespace: ns.Name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox",
			SecurityContext: &corev1.SecurityContext{Privileged: new(bool)}}}}}
	*privileged.Spec.Containers[0].SecurityContext.Privileged = true
	err := cl.Create(ctx, privileged)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "violates PodSecurity") || !strings.Contains(err.Error(), "privileged") {
		t.Errorf("a privileged Pod in a twin namespace: err = %v, want Pod Security Admission's refusal", err)
	}
	plain := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: ns.Name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox"}}}}
	if err := cl.Create(ctx, plain); err != nil {
		t.Errorf("a plain Pod in a twin namespace: %v", err)
	}

	// A provider choosing restricted relabels the twins it already has.
	r.PodSecurity = podsecurity.Restricted
	wantLabels(makeTwin(t, r, "phi", "shop", "shop-phi"), "restricted")
	plain.Name = "plain-restricted"
	if err := cl.Create(ctx, plain); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `violates PodSecurity "restricted:latest"`) {
		t.Errorf("an unhardened Pod in a restricted twin: err = %v, want Pod Security Admission's refusal", err)
	}
}
