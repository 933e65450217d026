package webhook

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager/shadowpod"
	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
	"github.com/liqo-go/liqo/pkg/webhook/quota"
)

// deniedBy is the prefix of the API server's error for our webhook.
const deniedBy = `admission webhook "shadowpod.validate.liqo.io" denied the request: `

// twin is the twin namespace of consumer in these tests.
func twin(consumer string) string { return "work-" + consumer }

// consumer sets up what the provider holds for a consumer: its tenant
// namespace with a Quota (unless quota is nil) and a twin namespace
// labelled as the TwinReconciler labels it.
func consumer(t *testing.T, id string, enforcement offv1beta1.LimitsEnforcement, quota corev1.ResourceList) {
	t.Helper()
	ctx := context.Background()
	for _, ns := range []*corev1.Namespace{
		{ObjectMeta: metav1.ObjectMeta{Name: consts.TenantNamespace(id)}},
		{ObjectMeta: metav1.ObjectMeta{Name: twin(id), Labels: map[string]string{
			consts.TwinNamespaceLabel: "true", consts.ManagedByLabel: consts.ManagedByValue, consts.RemoteClusterIDLabel: id}}},
	} {
		if err := cl.Create(ctx, ns); err != nil {
			t.Fatal(err)
		}
	}
	if quota == nil {
		return
	}
	q := &offv1beta1.Quota{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: consts.TenantNamespace(id)},
		Spec: offv1beta1.QuotaSpec{User: consts.ConsumerUser(id), LimitsEnforcement: enforcement, Resources: quota}}
	if err := cl.Create(ctx, q); err != nil {
		t.Fatal(err)
	}
}

// asConsumer is a client acting as consumer id's control plane, allowed by
// RBAC to write ShadowPods in the given namespaces, so that what refuses
// it elsewhere is the webhook.
func asConsumer(t *testing.T, id string, namespaces ...string) client.Client {
	t.Helper()
	ctx := context.Background()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "test-shadowpods"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{offv1beta1.GroupVersion.Group}, Resources: []string{"shadowpods"},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}}}
	if err := cl.Create(ctx, role); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	for _, ns := range namespaces {
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "test-" + id, Namespace: ns},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: consts.ConsumerUser(id)}}}
		if err := cl.Create(ctx, rb); err != nil {
			t.Fatal(err)
		}
	}
	cfg := rest.CopyConfig(cluster.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: consts.ConsumerUser(id), Groups: []string{consts.ConsumerGroup}}
	c, err := client.New(cfg, client.Options{Scheme: apis.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	// The RoleBindings reach the authorizer's cache shortly after.
	eventually(t, "the consumer's RBAC", func(ctx context.Context) (bool, error) {
		err := c.List(ctx, &offv1beta1.ShadowPodList{}, client.InNamespace(namespaces[0]))
		return err == nil, err
	})
	return c
}

// shadowPod asks for cpu (a request, and a limit if given) on behalf of
// origin; an empty cpu asks for nothing, like seed 003's pod.
func shadowPod(name, namespace, origin, cpu, cpuLimit string) *offv1beta1.ShadowPod {
	c := corev1.Container{Name: "app", Image: "busybox"}
	if cpu != "" {
		c.Resources.Requests = webhooktest.List("cpu", cpu)
	}
	if cpuLimit != "" {
		c.Resources.Limits = webhooktest.List("cpu", cpuLimit)
	}
	sp := &offv1beta1.ShadowPod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: offv1beta1.ShadowPodSpec{Pod: corev1.PodSpec{Containers: []corev1.Container{c}}}}
	if origin != "" {
		sp.Labels = map[string]string{consts.OriginClusterIDLabel: origin}
	}
	return sp
}

// waitUsed waits until the status.used of consumer's Quota (named after
// it, in its tenant namespace) is want.
func waitUsed(t *testing.T, what, consumer string, want corev1.ResourceList) {
	t.Helper()
	eventually(t, what, func(ctx context.Context) (bool, error) {
		var q offv1beta1.Quota
		if err := cl.Get(ctx, client.ObjectKey{Namespace: consts.TenantNamespace(consumer), Name: consumer}, &q); err != nil {
			return false, err
		}
		return quota.SameAmounts(q.Status.Used, want), fmt.Errorf("used = %v", q.Status.Used)
	})
}

// wantDenied fails unless err is our webhook's denial containing text.
func wantDenied(t *testing.T, what string, err error, text string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), deniedBy) || !strings.Contains(err.Error(), text) {
		t.Errorf("%s: err = %v, want a denial containing %q", what, err, text)
	}
}

func TestShadowPodQuota(t *testing.T) {
	ctx := context.Background()
	consumer(t, "alpha", offv1beta1.SoftLimitsEnforcement, webhooktest.List("cpu", "1", "memory", "1Gi", "pods", "10"))
	first := shadowPod("first", twin("alpha"), "alpha", "600m", "")
	if err := cl.Create(ctx, first); err != nil {
		t.Fatalf("a ShadowPod within quota: %v", err)
	}
	err := cl.Create(ctx, shadowPod("second", twin("alpha"), "alpha", "600m", ""))
	wantDenied(t, "a ShadowPod over quota", err, "quota usage exceeded: cpu requested 600m, used 600m of 1")
	// A resource no Quota lists was not granted: a modified consumer
	// asking for a GPU the provider never gave it is refused.
	gpu := shadowPod("gpu", twin("alpha"), "alpha", "100m", "")
	gpu.Spec.Pod.Containers[0].Resources.Limits = webhooktest.List("nvidia.com/gpu", "1")
	wantDenied(t, "a ShadowPod asking for an ungranted GPU", cl.Create(ctx, gpu), "quota usage exceeded: nvidia.com/gpu requested 1, none granted")
	if err := cl.Create(ctx, shadowPod("third", twin("alpha"), "alpha", "400m", "")); err != nil {
		t.Fatalf("a ShadowPod filling the quota: %v", err)
	}

	waitUsed(t, "the Quota's status.used", "alpha", webhooktest.List("cpu", "1", "memory", "0", "pods", "2"))

	// Deleting a ShadowPod gives its share back.
	if err := cl.Delete(ctx, first); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deleted ShadowPod's share back", func(ctx context.Context) (bool, error) {
		err := cl.Create(ctx, shadowPod("fourth", twin("alpha"), "alpha", "500m", ""))
		return err == nil, err
	})

	// Cordoned: no new ShadowPod, but the existing ones may still change.
	var q offv1beta1.Quota
	if err := cl.Get(ctx, client.ObjectKey{Namespace: consts.TenantNamespace("alpha"), Name: "alpha"}, &q); err != nil {
		t.Fatal(err)
	}
	q.Spec.Cordoned = ptr.To(true)
	if err := cl.Update(ctx, &q); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the cordon applied", func(ctx context.Context) (bool, error) {
		err := cl.Create(ctx, shadowPod("fifth", twin("alpha"), "alpha", "", ""))
		if err == nil {
			return false, fmt.Errorf("admitted while cordoned")
		}
		return strings.Contains(err.Error(), "the ResourceSlice alpha of consumer alpha is cordoned on this provider"), err
	})
	// A second, open slice's grant is what new ShadowPods may use: the
	// running ones (900m cpu) nearly fill it, so a new one past it is refused naming
	// the cordoned slice whose grant is not counted.
	spare := &offv1beta1.Quota{ObjectMeta: metav1.ObjectMeta{Name: "spare", Namespace: consts.TenantNamespace("alpha")},
		Spec: offv1beta1.QuotaSpec{User: consts.ConsumerUser("alpha"), LimitsEnforcement: offv1beta1.SoftLimitsEnforcement, Resources: webhooktest.List("cpu", "1", "pods", "10")}}
	if err := cl.Create(ctx, spare); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the open slice's grant counted alone", func(ctx context.Context) (bool, error) {
		err := cl.Create(ctx, shadowPod("sixth", twin("alpha"), "alpha", "200m", ""))
		if err == nil {
			return false, fmt.Errorf("admitted past the open slice's grant")
		}
		return strings.Contains(err.Error(), "the grant of its cordoned ResourceSlices alpha is not counted"), err
	})
	var third offv1beta1.ShadowPod
	if err := cl.Get(ctx, client.ObjectKey{Namespace: twin("alpha"), Name: "third"}, &third); err != nil {
		t.Fatal(err)
	}
	third.Labels["touched"] = "true"
	if err := cl.Update(ctx, &third); err != nil {
		t.Errorf("an update leaving the resources alone was refused under a cordon: %v", err)
	}
}

// TestShadowPodPodCount: a consumer runs no more pods than its Quota
// grants, whatever they ask for: ShadowPods without resources, like seed
// 003's pod, each count one pod. This is the only bound on a twin's pods
// (its ResourceQuota counts only what the consumer writes there itself).
func TestShadowPodPodCount(t *testing.T) {
	ctx := context.Background()
	consumer(t, "omega", offv1beta1.SoftLimitsEnforcement, webhooktest.List("cpu", "100", "pods", "2"))
	for _, name := range []string{"one", "two"} {
		if err := cl.Create(ctx, shadowPod(name, twin("omega"), "omega", "", "")); err != nil {
			t.Fatalf("ShadowPod %s within the pods granted: %v", name, err)
		}
	}
	wantDenied(t, "a third ShadowPod of two pods granted",
		cl.Create(ctx, shadowPod("three", twin("omega"), "omega", "", "")), "quota usage exceeded: pods requested 1, used 2 of 2")
}

// TestShadowPodQuotaOnceRunning: a ShadowPod whose pod exists is cached
// with only its resources (shadowpod.ShadowPodCache, as the manager runs
// it), and the ledger still counts them at that update.
func TestShadowPodQuotaOnceRunning(t *testing.T) {
	ctx := context.Background()
	consumer(t, "theta", offv1beta1.SoftLimitsEnforcement, webhooktest.List("cpu", "1", "pods", "10"))
	running := shadowPod("running", twin("theta"), "theta", "600m", "")
	if err := cl.Create(ctx, running); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(running.DeepCopy())
	running.Status.Phase = corev1.PodRunning
	meta.SetStatusCondition(&running.Status.Conditions, metav1.Condition{Type: shadowpod.ConditionReady,
		Status: metav1.ConditionTrue, Reason: shadowpod.ReasonPodReady})
	if err := cl.Status().Patch(ctx, running, patch); err != nil {
		t.Fatal(err)
	}
	// The cache gets a second ShadowPod after the first one's status: the
	// Quota's usage counting both shows the ledger has seen that status.
	if err := cl.Create(ctx, shadowPod("after", twin("theta"), "theta", "300m", "")); err != nil {
		t.Fatal(err)
	}
	waitUsed(t, "the Quota's status.used counting both", "theta", webhooktest.List("cpu", "900m", "pods", "2"))
	wantDenied(t, "a ShadowPod past the running one's share",
		cl.Create(ctx, shadowPod("over", twin("theta"), "theta", "200m", "")), "quota usage exceeded: cpu requested 200m, used 900m of 1")
}

func TestShadowPodHardLimits(t *testing.T) {
	ctx := context.Background()
	consumer(t, "beta", offv1beta1.HardLimitsEnforcement, webhooktest.List("cpu", "1", "pods", "10"))
	err := cl.Create(ctx, shadowPod("bursty", twin("beta"), "beta", "100m", "2"))
	wantDenied(t, "limits over a Hard quota", err, "quota usage exceeded: limits.cpu requested 2, used 0 of 1")
	// Seed 003's pod asks for nothing: it runs under the default enforcement.
	if err := cl.Create(ctx, shadowPod("test-offload", twin("beta"), "beta", "", "")); err != nil {
		t.Errorf("a pod without resources under Hard enforcement: %v", err)
	}
}

func TestShadowPodWithoutQuota(t *testing.T) {
	consumer(t, "gamma", "", nil)
	err := cl.Create(context.Background(), shadowPod("orphan", twin("gamma"), "gamma", "", ""))
	wantDenied(t, "a ShadowPod of a consumer without Quota", err, "failed getting quota")
}

func TestShadowPodOrigin(t *testing.T) {
	ctx := context.Background()
	plenty := webhooktest.List("cpu", "10", "pods", "100")
	consumer(t, "delta", offv1beta1.SoftLimitsEnforcement, plenty)
	consumer(t, "epsilon", offv1beta1.SoftLimitsEnforcement, plenty)
	delta := asConsumer(t, "delta", twin("delta"), twin("epsilon"))

	if err := delta.Create(ctx, shadowPod("own", twin("delta"), "delta", "100m", "")); err != nil {
		t.Fatalf("a consumer in its own twin namespace: %v", err)
	}
	wantDenied(t, "a consumer in another consumer's twin namespace",
		delta.Create(ctx, shadowPod("theirs", twin("epsilon"), "delta", "100m", "")), "belongs to consumer epsilon")
	wantDenied(t, "a consumer posing as another",
		delta.Create(ctx, shadowPod("posing", twin("delta"), "epsilon", "100m", "")), `must be "delta"`)
	wantDenied(t, "a consumer without the origin label",
		delta.Create(ctx, shadowPod("unlabelled", twin("delta"), "", "100m", "")), consts.OriginClusterIDLabel)

	host := shadowPod("host", twin("delta"), "delta", "", "")
	host.Spec.Pod.HostNetwork = true
	wantDenied(t, "hostNetwork", delta.Create(ctx, host), "spec.pod.hostNetwork must be false")
	pinned := shadowPod("pinned", twin("delta"), "delta", "", "")
	pinned.Spec.Pod.NodeName = "worker-0"
	wantDenied(t, "nodeName", delta.Create(ctx, pinned), "spec.pod.nodeName must be empty")

	// Relabelling its ShadowPod to another origin is refused too.
	var own offv1beta1.ShadowPod
	if err := delta.Get(ctx, client.ObjectKey{Namespace: twin("delta"), Name: "own"}, &own); err != nil {
		t.Fatal(err)
	}
	own.Labels[consts.OriginClusterIDLabel] = "epsilon"
	wantDenied(t, "a consumer relabelling its ShadowPod", delta.Update(ctx, &own), `must be "delta"`)

	// Administrators may write, with the origin the namespace says.
	if err := cl.Create(ctx, shadowPod("by-admin", twin("epsilon"), "epsilon", "", "")); err != nil {
		t.Errorf("an administrator with the right origin: %v", err)
	}
	wantDenied(t, "an administrator with a wrong origin",
		cl.Create(ctx, shadowPod("wrong", twin("epsilon"), "delta", "", "")), `must be "epsilon"`)
	wantDenied(t, "a ShadowPod outside twin namespaces",
		cl.Create(ctx, shadowPod("stray", "default", "delta", "", "")), "not a twin namespace")
}

// TestShadowPodBurst creates many ShadowPods at once, each within the quota
// alone: exactly as many as fit are admitted.
func TestShadowPodBurst(t *testing.T) {
	ctx := context.Background()
	consumer(t, "zeta", offv1beta1.SoftLimitsEnforcement, webhooktest.List("cpu", "1", "pods", "1000"))
	var admitted, exceeded atomic.Int32
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := cl.Create(ctx, shadowPod(fmt.Sprintf("burst-%d", i), twin("zeta"), "zeta", "100m", ""))
			switch {
			case err == nil:
				admitted.Add(1)
			case strings.Contains(err.Error(), "quota usage exceeded"):
				exceeded.Add(1)
			default:
				t.Errorf("burst-%d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if admitted.Load() != 10 || exceeded.Load() != 30 {
		t.Errorf("%d admitted, %d over quota; want 10 and 30", admitted.Load(), exceeded.Load())
	}
}
