package shadowpod_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	shadowpodctrl "github.com/liqo-go/liqo/pkg/controllermanager/shadowpod"
	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
)

// stillTerminating holds the test's pod in its grace period: this cluster
// has no kubelet to run a preStop hook for a year (issue 30), and a
// finalizer keeps a deleted pod just as present.
const stillTerminating = "test.liqo.io/still-terminating"

// TestShadowPodCountsWhileItsPodTerminates: a consumer deletes a ShadowPod
// whose pod takes its time to stop (issue 30, finding 3: the quota was freed
// at once while the pod ran on). The ShadowPod keeps counting, in the
// Quota's status.used and against a new ShadowPod, until its pod is gone.
func TestShadowPodCountsWhileItsPodTerminates(t *testing.T) {
	ctx := context.Background()
	webhooktest.Consumer(t, "koala", offv1beta1.SoftLimitsEnforcement, webhooktest.List("cpu", "1", "pods", "10"))
	koala := webhooktest.AsConsumer(t, "koala", webhooktest.Twin("koala"))

	slow := webhooktest.ShadowPod("slow", webhooktest.Twin("koala"), "koala", "600m", "")
	if err := koala.Create(ctx, slow); err != nil {
		t.Fatal(err)
	}
	// The pod the ShadowPod controller (not running here) would make.
	pod := shadowpodctrl.ForgePod(slow, shadowpodctrl.PodOptions{}, nil)
	pod.Finalizers = []string{stillTerminating}
	webhooktest.Eventually(t, "the slow ShadowPod's pod created", func(ctx context.Context) (bool, error) {
		err := webhooktest.Cl.Create(ctx, pod) // refused until the twin's default ServiceAccount exists
		return err == nil, err
	})
	t.Cleanup(func() { dropFinalizers(t, pod) })
	webhooktest.Eventually(t, "the pod in the webhook's cache", func(ctx context.Context) (bool, error) {
		err := running.Cache.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})
		return err == nil, err
	})

	if err := koala.Delete(ctx, slow); err != nil {
		t.Fatal(err)
	}
	// As the ShadowPod controller would: the pod now terminates.
	if err := webhooktest.Cl.Delete(ctx, pod); err != nil {
		t.Fatal(err)
	}
	webhooktest.Eventually(t, "the slow ShadowPod gone", func(ctx context.Context) (bool, error) {
		err := webhooktest.Cl.Get(ctx, client.ObjectKeyFromObject(slow), &offv1beta1.ShadowPod{})
		return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
	})
	// A ShadowPod asking for no cpu, created after the deletion: once the
	// Quota counts it, the ledger has seen the deletion before it.
	if err := koala.Create(ctx, webhooktest.ShadowPod("marker", webhooktest.Twin("koala"), "koala", "", "")); err != nil {
		t.Fatal(err)
	}
	webhooktest.WaitUsed(t, "status.used counting the marker and the terminating pod", "koala", webhooktest.List("cpu", "600m", "pods", "2"))
	webhooktest.WantDenied(t, "a ShadowPod past the share of a pod still terminating",
		koala.Create(ctx, webhooktest.ShadowPod("next", webhooktest.Twin("koala"), "koala", "600m", "")), "quota usage exceeded: cpu requested 600m, used 600m of 1")

	dropFinalizers(t, pod)
	webhooktest.Eventually(t, "the next ShadowPod admitted once the pod is gone", func(ctx context.Context) (bool, error) {
		err := koala.Create(ctx, webhooktest.ShadowPod("next", webhooktest.Twin("koala"), "koala", "600m", ""))
		return err == nil, err
	})
	webhooktest.WaitUsed(t, "status.used counting the marker and the next ShadowPod", "koala", webhooktest.List("cpu", "600m", "pods", "2"))
}

// dropFinalizers lets the test's pod go.
func dropFinalizers(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	patch := client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`))
	if err := webhooktest.Cl.Patch(context.Background(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace}}, patch); client.IgnoreNotFound(err) != nil {
		t.Errorf("removing the test's finalizer from pod %s: %v", pod.Name, err)
	}
}
