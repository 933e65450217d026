package shadowpod_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	shadowpodctrl "github.com/liqo-go/liqo/pkg/controllermanager/shadowpod"
	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
)

func TestShadowPodQuota(t *testing.T) {
	ctx := context.Background()
	webhooktest.Consumer(t, "alpha", offv1beta1.SoftLimitsEnforcement, webhooktest.List("cpu", "1", "memory", "1Gi", "pods", "10"))
	first := webhooktest.ShadowPod("first", webhooktest.Twin("alpha"), "alpha", "600m", "")
	if err := webhooktest.Cl.Create(ctx, first); err != nil {
		t.Fatalf("a ShadowPod within quota: %v", err)
	}
	err := webhooktest.Cl.Create(ctx, webhooktest.ShadowPod("second", webhooktest.Twin("alpha"), "alpha", "600m", ""))
	webhooktest.WantDenied(t, "a ShadowPod over quota", err, "quota usage exceeded: cpu requested 600m, used 600m of 1")
	// A resource no Quota lists was not granted: a modified consumer
	// asking for a GPU the provider never gave it is refused.
	gpu := webhooktest.ShadowPod("gpu", webhooktest.Twin("alpha"), "alpha", "100m", "")
	gpu.Spec.Pod.Containers[0].Resources.Limits = webhooktest.List("nvidia.com/gpu", "1")
	webhooktest.WantDenied(t, "a ShadowPod asking for an ungranted GPU", webhooktest.Cl.Create(ctx, gpu), "quota usage exceeded: nvidia.com/gpu requested 1, none granted")
	if err := webhooktest.Cl.Create(ctx, webhooktest.ShadowPod("third", webhooktest.Twin("alpha"), "alpha", "400m", "")); err != nil {
		t.Fatalf("a ShadowPod filling the quota: %v", err)
	}

	webhooktest.WaitUsed(t, "the Quota's status.used", "alpha", webhooktest.List("cpu", "1", "memory", "0", "pods", "2"))

	// Deleting a ShadowPod gives its share back.
	if err := webhooktest.Cl.Delete(ctx, first); err != nil {
		t.Fatal(err)
	}
	webhooktest.Eventually(t, "the deleted ShadowPod's share back", func(ctx context.Context) (bool, error) {
		err := webhooktest.Cl.Create(ctx, webhooktest.ShadowPod("fourth", webhooktest.Twin("alpha"), "alpha", "500m", ""))
		return err == nil, err
	})

	// Cordoned: no new ShadowPod, but the existing ones may still change.
	var q offv1beta1.Quota
	if err := webhooktest.Cl.Get(ctx, client.ObjectKey{Namespace: consts.TenantNamespace("alpha"), Name: "alpha"}, &q); err != nil {
		t.Fatal(err)
	}
	q.Spec.Cordoned = ptr.To(true)
	if err := webhooktest.Cl.Update(ctx, &q); err != nil {
		t.Fatal(err)
	}
	webhooktest.Eventually(t, "the cordon applied", func(ctx context.Context) (bool, error) {
		err := webhooktest.Cl.Create(ctx, webhooktest.ShadowPod("fifth", webhooktest.Twin("alpha"), "alpha", "", ""))
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
	if err := webhooktest.Cl.Create(ctx, spare); err != nil {
		t.Fatal(err)
	}
	webhooktest.Eventually(t, "the open slice's grant counted alone", func(ctx context.Context) (bool, error) {
		err := webhooktest.Cl.Create(ctx, webhooktest.ShadowPod("sixth", webhooktest.Twin("alpha"), "alpha", "200m", ""))
		if err == nil {
			return false, fmt.Errorf("admitted past the open slice's grant")
		}
		return strings.Contains(err.Error(), "the grant of its cordoned ResourceSlices alpha is not counted"), err
	})
	var third offv1beta1.ShadowPod
	if err := webhooktest.Cl.Get(ctx, client.ObjectKey{Namespace: webhooktest.Twin("alpha"), Name: "third"}, &third); err != nil {
		t.Fatal(err)
	}
	third.Labels["touched"] = "true"
	if err := webhooktest.Cl.Update(ctx, &third); err != nil {
		t.Errorf("an update leaving the resources alone was refused under a cordon: %v", err)
	}
}

// TestShadowPodPodCount: a consumer runs no more pods than its Quota
// grants, whatever they ask for: ShadowPods without resources, like seed
// 003's pod, each count one pod. This is the only bound on a twin's pods
// (its ResourceQuota counts only what the consumer writes there itself).
func TestShadowPodPodCount(t *testing.T) {
	ctx := context.Background()
	webhooktest.Consumer(t, "omega", offv1beta1.SoftLimitsEnforcement, webhooktest.List("cpu", "100", "pods", "2"))
	for _, name := range []string{"one", "two"} {
		if err := webhooktest.Cl.Create(ctx, webhooktest.ShadowPod(name, webhooktest.Twin("omega"), "omega", "", "")); err != nil {
			t.Fatalf("ShadowPod %s within the pods granted: %v", name, err)
		}
	}
	webhooktest.WantDenied(t, "a third ShadowPod of two pods granted",
		webhooktest.Cl.Create(ctx, webhooktest.ShadowPod("three", webhooktest.Twin("omega"), "omega", "", "")), "quota usage exceeded: pods requested 1, used 2 of 2")
}

// TestShadowPodQuotaOnceRunning: a ShadowPod whose pod exists is cached
// with only its resources (shadowpodctrl.ShadowPodCache, as the manager runs
// it), and the ledger still counts them at that update.
func TestShadowPodQuotaOnceRunning(t *testing.T) {
	ctx := context.Background()
	webhooktest.Consumer(t, "theta", offv1beta1.SoftLimitsEnforcement, webhooktest.List("cpu", "1", "pods", "10"))
	running := webhooktest.ShadowPod("running", webhooktest.Twin("theta"), "theta", "600m", "")
	if err := webhooktest.Cl.Create(ctx, running); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(running.DeepCopy())
	running.Status.Phase = corev1.PodRunning
	meta.SetStatusCondition(&running.Status.Conditions, metav1.Condition{Type: shadowpodctrl.ConditionReady,
		Status: metav1.ConditionTrue, Reason: shadowpodctrl.ReasonPodReady})
	if err := webhooktest.Cl.Status().Patch(ctx, running, patch); err != nil {
		t.Fatal(err)
	}
	// The cache gets a second ShadowPod after the first one's status: the
	// Quota's usage counting both shows the ledger has seen that status.
	if err := webhooktest.Cl.Create(ctx, webhooktest.ShadowPod("after", webhooktest.Twin("theta"), "theta", "300m", "")); err != nil {
		t.Fatal(err)
	}
	webhooktest.WaitUsed(t, "the Quota's status.used counting both", "theta", webhooktest.List("cpu", "900m", "pods", "2"))
	webhooktest.WantDenied(t, "a ShadowPod past the running one's share",
		webhooktest.Cl.Create(ctx, webhooktest.ShadowPod("over", webhooktest.Twin("theta"), "theta", "200m", "")), "quota usage exceeded: cpu requested 200m, used 900m of 1")
}

func TestShadowPodHardLimits(t *testing.T) {
	ctx := context.Background()
	webhooktest.Consumer(t, "beta", offv1beta1.HardLimitsEnforcement, webhooktest.List("cpu", "1", "pods", "10"))
	err := webhooktest.Cl.Create(ctx, webhooktest.ShadowPod("bursty", webhooktest.Twin("beta"), "beta", "100m", "2"))
	webhooktest.WantDenied(t, "limits over a Hard quota", err, "quota usage exceeded: limits.cpu requested 2, used 0 of 1")
	// Seed 003's pod asks for nothing: it runs under the default enforcement.
	if err := webhooktest.Cl.Create(ctx, webhooktest.ShadowPod("test-offload", webhooktest.Twin("beta"), "beta", "", "")); err != nil {
		t.Errorf("a pod without resources under Hard enforcement: %v", err)
	}
}

func TestShadowPodWithoutQuota(t *testing.T) {
	webhooktest.Consumer(t, "gamma", "", nil)
	err := webhooktest.Cl.Create(context.Background(), webhooktest.ShadowPod("orphan", webhooktest.Twin("gamma"), "gamma", "", ""))
	webhooktest.WantDenied(t, "a ShadowPod of a consumer without Quota", err, "failed getting quota")
}

func TestShadowPodOrigin(t *testing.T) {
	ctx := context.Background()
	plenty := webhooktest.List("cpu", "10", "pods", "100")
	webhooktest.Consumer(t, "delta", offv1beta1.SoftLimitsEnforcement, plenty)
	webhooktest.Consumer(t, "epsilon", offv1beta1.SoftLimitsEnforcement, plenty)
	delta := webhooktest.AsConsumer(t, "delta", webhooktest.Twin("delta"), webhooktest.Twin("epsilon"))

	if err := delta.Create(ctx, webhooktest.ShadowPod("own", webhooktest.Twin("delta"), "delta", "100m", "")); err != nil {
		t.Fatalf("a consumer in its own twin namespace: %v", err)
	}
	webhooktest.WantDenied(t, "a consumer in another consumer's twin namespace",
		delta.Create(ctx, webhooktest.ShadowPod("theirs", webhooktest.Twin("epsilon"), "delta", "100m", "")), "belongs to consumer epsilon")
	webhooktest.WantDenied(t, "a consumer posing as another",
		delta.Create(ctx, webhooktest.ShadowPod("posing", webhooktest.Twin("delta"), "epsilon", "100m", "")), `must be "delta"`)
	webhooktest.WantDenied(t, "a consumer without the origin label",
		delta.Create(ctx, webhooktest.ShadowPod("unlabelled", webhooktest.Twin("delta"), "", "100m", "")), consts.OriginClusterIDLabel)

	host := webhooktest.ShadowPod("host", webhooktest.Twin("delta"), "delta", "", "")
	host.Spec.Pod.HostNetwork = true
	webhooktest.WantDenied(t, "hostNetwork", delta.Create(ctx, host), "spec.pod.hostNetwork must be false")
	pinned := webhooktest.ShadowPod("pinned", webhooktest.Twin("delta"), "delta", "", "")
	pinned.Spec.Pod.NodeName = "worker-0"
	webhooktest.WantDenied(t, "nodeName", delta.Create(ctx, pinned), "spec.pod.nodeName must be empty")

	// Relabelling its ShadowPod to another origin is refused too.
	var own offv1beta1.ShadowPod
	if err := delta.Get(ctx, client.ObjectKey{Namespace: webhooktest.Twin("delta"), Name: "own"}, &own); err != nil {
		t.Fatal(err)
	}
	own.Labels[consts.OriginClusterIDLabel] = "epsilon"
	webhooktest.WantDenied(t, "a consumer relabelling its ShadowPod", delta.Update(ctx, &own), `must be "delta"`)

	// Administrators may write, with the origin the namespace says.
	if err := webhooktest.Cl.Create(ctx, webhooktest.ShadowPod("by-admin", webhooktest.Twin("epsilon"), "epsilon", "", "")); err != nil {
		t.Errorf("an administrator with the right origin: %v", err)
	}
	webhooktest.WantDenied(t, "an administrator with a wrong origin",
		webhooktest.Cl.Create(ctx, webhooktest.ShadowPod("wrong", webhooktest.Twin("epsilon"), "delta", "", "")), `must be "epsilon"`)
	webhooktest.WantDenied(t, "a ShadowPod outside twin namespaces",
		webhooktest.Cl.Create(ctx, webhooktest.ShadowPod("stray", "default", "delta", "", "")), "not a twin namespace")
}

// TestShadowPodBurst creates many ShadowPods at once, each within the quota
// alone: exactly as many as fit are admitted.
func TestShadowPodBurst(t *testing.T) {
	ctx := context.Background()
	webhooktest.Consumer(t, "zeta", offv1beta1.SoftLimitsEnforcement, webhooktest.List("cpu", "1", "pods", "1000"))
	var admitted, exceeded atomic.Int32
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := webhooktest.Cl.Create(ctx, webhooktest.ShadowPod(fmt.Sprintf("burst-%d", i), webhooktest.Twin("zeta"), "zeta", "100m", ""))
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
