package webhooktest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/liqo-go/liqo/apis"
	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager/offloading"
)

// Eventually polls cond until it holds, failing the test after 30 s.
func Eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var last error
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		last = err
		return ok, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v (last error: %v)", what, err, last)
	}
}

// OffloadedNamespace creates a namespace labelled as the consumer's
// offloading controller labels it, with a NamespaceOffloading of spec.
func OffloadedNamespace(t *testing.T, name string, spec offv1beta1.NamespaceOffloadingSpec) {
	t.Helper()
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{consts.SchedulingEnabledLabel: "true"}}}
	if err := Cl.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	nsof := &offv1beta1.NamespaceOffloading{ObjectMeta: metav1.ObjectMeta{Name: offv1beta1.NamespaceOffloadingName, Namespace: name}, Spec: spec}
	if err := Cl.Create(ctx, nsof); err != nil {
		t.Fatal(err)
	}
}

func PlainPod(ns string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox"}}}}
}

// ShadowPodDeniedBy is the prefix of the API server's error for our webhook.
const ShadowPodDeniedBy = `admission webhook "shadowpod.validate.liqo.io" denied the request: `

// Twin is the twin namespace of consumer in these tests.
func Twin(consumer string) string { return "work-" + consumer }

// Consumer sets up what the provider holds for a consumer: its tenant
// namespace with a Quota (unless quota is nil) and a twin namespace
// labelled as the TwinReconciler labels it.
func Consumer(t *testing.T, id string, enforcement offv1beta1.LimitsEnforcement, quota corev1.ResourceList) {
	t.Helper()
	ctx := context.Background()
	for _, ns := range []*corev1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: consts.TenantNamespace(id)}},
		{ObjectMeta: metav1.ObjectMeta{Name: Twin(id), Labels: map[string]string{
			consts.TwinNamespaceLabel: "true", consts.ManagedByLabel: consts.ManagedByValue, consts.RemoteClusterIDLabel: id}}},
	} {
		if err := Cl.Create(ctx, ns); err != nil {
			t.Fatal(err)
		}
	}
	if quota == nil {
		return
	}
	q := &offv1beta1.Quota{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: consts.TenantNamespace(id)},
		Spec: offv1beta1.QuotaSpec{User: consts.ConsumerUser(id), LimitsEnforcement: enforcement, Resources: quota}}
	if err := Cl.Create(ctx, q); err != nil {
		t.Fatal(err)
	}
}

// AsConsumer is a client acting as consumer id's control plane, allowed by
// RBAC to write ShadowPods in the given namespaces, so that what refuses
// it elsewhere is the webhook.
func AsConsumer(t *testing.T, id string, namespaces ...string) client.Client {
	t.Helper()
	ctx := context.Background()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "test-shadowpods"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{offv1beta1.GroupVersion.Group}, Resources: []string{"shadowpods"},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}}}
	if err := Cl.Create(ctx, role); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	for _, ns := range namespaces {
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "test-" + id, Namespace: ns},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: consts.ConsumerUser(id)}}}
		if err := Cl.Create(ctx, rb); err != nil {
			t.Fatal(err)
		}
	}
	c := consumerClient(t, id, &offv1beta1.ShadowPodList{}, namespaces[0])
	return c
}

// ShadowPod asks for cpu (a request, and a limit if given) on behalf of
// origin; an empty cpu asks for nothing, like seed 003's pod.
func ShadowPod(name, namespace, origin, cpu, cpuLimit string) *offv1beta1.ShadowPod {
	c := corev1.Container{Name: "app", Image: "busybox"}
	if cpu != "" {
		c.Resources.Requests = List("cpu", cpu)
	}
	if cpuLimit != "" {
		c.Resources.Limits = List("cpu", cpuLimit)
	}
	sp := &offv1beta1.ShadowPod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: offv1beta1.ShadowPodSpec{Pod: corev1.PodSpec{Containers: []corev1.Container{c}}}}
	if origin != "" {
		sp.Labels = map[string]string{consts.OriginClusterIDLabel: origin}
	}
	return sp
}

// WaitUsed waits until the status.used of consumer's Quota (named after
// it, in its tenant namespace) is want.
func WaitUsed(t *testing.T, what, consumer string, want corev1.ResourceList) {
	t.Helper()
	Eventually(t, what, func(ctx context.Context) (bool, error) {
		var q offv1beta1.Quota
		if err := Cl.Get(ctx, client.ObjectKey{Namespace: consts.TenantNamespace(consumer), Name: consumer}, &q); err != nil {
			return false, err
		}
		return equality.Semantic.DeepEqual(q.Status.Used, want), fmt.Errorf("used = %v", q.Status.Used)
	})
}

// WantDenied fails unless err is our webhook's denial containing text.
func WantDenied(t *testing.T, what string, err error, text string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), ShadowPodDeniedBy) || !strings.Contains(err.Error(), text) {
		t.Errorf("%s: err = %v, want a denial containing %q", what, err, text)
	}
}

// Blob is a ConfigMap as the reflection sends it, holding size bytes.
func Blob(name, namespace, origin string, size int) *corev1.ConfigMap {
	cm := ReflectedConfigMap(name, namespace, origin)
	cm.Data = map[string]string{"blob": strings.Repeat("x", size)}
	return cm
}

// RemoteControlPlane binds consumer id in its tenant namespace to the
// replicas' rights of the ClusterRole a provider grants it there
// (liqo-remote-controlplane, whose rules this package cannot import).
func RemoteControlPlane(t *testing.T, id string) {
	t.Helper()
	ctx := context.Background()
	all := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "liqo-remote-controlplane"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{authv1beta1.GroupVersion.Group}, Resources: []string{"resourceslices"}, Verbs: all},
		{APIGroups: []string{"offloading.liqo.io"}, Resources: []string{"namespacemaps", "exportrecords"}, Verbs: all},
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
	}}
	if err := Cl.Create(ctx, role); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "liqo-consumer", Namespace: consts.TenantNamespace(id)},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: consts.ConsumerUser(id)}}}
	if err := Cl.Create(ctx, rb); err != nil {
		t.Fatal(err)
	}
}

// ReplicaSlice is a ResourceSlice as a consumer's replicator writes it.
func ReplicaSlice(name, id string) *authv1beta1.ResourceSlice {
	return &authv1beta1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: consts.TenantNamespace(id),
		Labels: map[string]string{consts.ReplicationLabel: "true", consts.OriginClusterIDLabel: id}},
		Spec: authv1beta1.ResourceSliceSpec{Class: authv1beta1.DefaultResourceSliceClass}}
}

// ExportRecord is the ExportRecord of Service svc/namespace exported by
// consumer id, in its tenant namespace, as its controller manager writes
// it on a provider.
func ExportRecord(name, id string) *offv1beta1.ExportRecord {
	return &offv1beta1.ExportRecord{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: consts.TenantNamespace(id),
		Labels: map[string]string{mcsv1beta1.LabelSourceCluster: id}},
		Spec: offv1beta1.ExportRecordSpec{Namespace: "app", Service: name, Created: metav1.Now(), Type: mcsv1beta1.ClusterSetIP,
			Endpoints: offv1beta1.EndpointSliceTemplate{AddressType: discoveryv1.AddressTypeIPv4}}}
}

// ReflectedDeniedBy is the prefix of the API server's error for the
// reflected objects' webhook.
const ReflectedDeniedBy = `admission webhook "reflected.validate.liqo.io" denied the request: `

// offloadingRole mirrors, for the kinds the reflection writes, the rules
// of the ClusterRole the controller manager grants consumers in their twin
// namespaces (controllermanager.OffloadingClusterRole, whose rules this
// package cannot import): the TwinReconciler binds the consumer to it by
// name, so a consumer client here holds a twin's real grant.
func offloadingRole(t *testing.T) {
	t.Helper()
	all := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "liqo-remote-offloading"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets", "services"}, Verbs: all},
			{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses"}, Verbs: all},
			{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"get", "list", "watch", "create", "delete"}},
			{APIGroups: []string{offv1beta1.GroupVersion.Group}, Resources: []string{"shadowpods", "shadowendpointslices"}, Verbs: all},
		}}
	if err := Cl.Create(context.Background(), role); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// ReflectingConsumer makes twin namespaces of consumer id as the provider's
// TwinReconciler makes them (labels and RoleBinding), one per local
// namespace, and returns a client acting as the consumer's control plane.
func ReflectingConsumer(t *testing.T, id string, locals ...string) (client.Client, []string) {
	t.Helper()
	offloadingRole(t)
	ctx := context.Background()
	if err := Cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: consts.TenantNamespace(id)}}); err != nil {
		t.Fatal(err)
	}
	m := &offv1beta1.NamespaceMap{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: consts.TenantNamespace(id),
		Labels: map[string]string{consts.ReplicationLabel: "true"}}, Spec: offv1beta1.NamespaceMapSpec{DesiredMapping: map[string]string{}}}
	var twins []string
	for _, local := range locals {
		m.Spec.DesiredMapping[local] = local + "-" + id
		twins = append(twins, local+"-"+id)
	}
	EnsureTenant(t, id)
	if err := Cl.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	ReconcileTwins(t, TwinReconciler(), m)
	return consumerClient(t, id, &corev1.ServiceList{}, twins[0]), twins
}

// WantReflectedDenied fails unless err is the reflected objects' webhook
// refusing with a message containing every fragment.
func WantReflectedDenied(t *testing.T, what string, err error, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: admitted, want the webhook's refusal containing %q", what, fragments)
		return
	}
	if !apierrors.IsForbidden(err) || !ContainsAll(err.Error(), append([]string{ReflectedDeniedBy}, fragments...)...) {
		t.Errorf("%s: err = %v, want the webhook's refusal containing %q", what, err, fragments)
	}
}

func ContainsAll(s string, fragments ...string) bool {
	for _, f := range fragments {
		if !strings.Contains(s, f) {
			return false
		}
	}
	return true
}

// EnsureTenant makes the Tenant of consumer id, as peering does: its maps
// count only while it exists.
func EnsureTenant(t *testing.T, id string) {
	t.Helper()
	tenant := &authv1beta1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: consts.TenantNamespace(id)},
		Spec: authv1beta1.TenantSpec{ClusterID: corev1beta1.ClusterID(id)}}
	if err := Cl.Create(context.Background(), tenant); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// TwinReconciler is the provider's TwinReconciler with its defaults.
func TwinReconciler() *offloading.TwinReconciler {
	return &offloading.TwinReconciler{Client: Cl, ClusterRole: "liqo-remote-offloading", Recorder: record.NewFakeRecorder(100),
		Options: offloading.DefaultTwinOptions()}
}

// ReconcileTwins runs r on map m until it has accepted every entry: a twin
// is handed to its consumer once the quota controller enforces its
// ResourceQuota, which takes more than one pass.
func ReconcileTwins(t *testing.T, r *offloading.TwinReconciler, m *offv1beta1.NamespaceMap) {
	t.Helper()
	Eventually(t, "the twins of "+m.Name+" accepted", func(ctx context.Context) (bool, error) {
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(m)}); err != nil {
			return false, err
		}
		var got offv1beta1.NamespaceMap
		if err := Cl.Get(ctx, client.ObjectKeyFromObject(m), &got); err != nil {
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

// consumerClient is a client acting as consumer id's control plane, once
// it may list into list in namespace: the RoleBindings granting it reach
// the authorizer's cache shortly after they are made.
func consumerClient(t *testing.T, id string, list client.ObjectList, namespace string) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(Cluster.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: consts.ConsumerUser(id), Groups: []string{consts.ConsumerGroup}}
	c, err := client.New(cfg, client.Options{Scheme: apis.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	Eventually(t, "the consumer's RBAC", func(ctx context.Context) (bool, error) {
		err := c.List(ctx, list, client.InNamespace(namespace))
		return err == nil, err
	})
	return c
}
