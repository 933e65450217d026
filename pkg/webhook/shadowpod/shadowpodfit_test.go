package shadowpod_test

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/forge"
	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
)

// TestShadowPodFitRefusal: a consumer that ignores the fit summary this
// provider publishes to it (2 CPUs free at most on any node) sends a
// 3-CPU pod: refused with the RemoteUnschedulable cause its reflection
// reads, naming the largest free piece; a 1-CPU pod is admitted. The
// quota (10 CPUs) would have let both through.
func TestShadowPodFitRefusal(t *testing.T) {
	ctx := context.Background()
	webhooktest.Consumer(t, "phi", offv1beta1.SoftLimitsEnforcement, webhooktest.List("cpu", "10", "memory", "10Gi", "pods", "100"))
	phi := webhooktest.AsConsumer(t, "phi", webhooktest.Twin("phi"))

	slice := &authv1beta1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "phi", Namespace: consts.TenantNamespace("phi"),
			Labels: map[string]string{consts.ReplicationLabel: "true"}},
		Spec: authv1beta1.ResourceSliceSpec{ConsumerClusterID: ptr.To(corev1beta1.ClusterID("phi")),
			ProviderClusterID: ptr.To(corev1beta1.ClusterID("provider"))},
	}
	if err := webhooktest.Cl.Create(ctx, slice); err != nil {
		t.Fatal(err)
	}
	slice.Status.Fit = &authv1beta1.FitSummary{Nodes: 2, UpdateTime: metav1.Now(), Groups: []authv1beta1.NodeFit{
		{Count: 1, Free: webhooktest.List("cpu", "2", "memory", "4Gi", "pods", "10")},
		{Count: 1, Free: webhooktest.List("cpu", "1", "memory", "8Gi", "pods", "10")},
	}}
	if err := webhooktest.Cl.Status().Update(ctx, slice); err != nil {
		t.Fatal(err)
	}
	webhooktest.Eventually(t, "the summary in the webhook's cache", func(ctx context.Context) (bool, error) {
		err := phi.Create(ctx, webhooktest.ShadowPod("too-big", webhooktest.Twin("phi"), "phi", "3", ""), client.DryRunAll)
		return apierrors.HasStatusCause(err, forge.ReasonRemoteUnschedulable), err
	})
	err := phi.Create(ctx, webhooktest.ShadowPod("too-big", webhooktest.Twin("phi"), "phi", "3", ""))
	webhooktest.WantDenied(t, "a pod no node has room for", err, "no node of this cluster has room for the pod (it requests cpu=3; the largest free piece is cpu=2)")
	if !apierrors.HasStatusCause(err, forge.ReasonRemoteUnschedulable) {
		t.Errorf("the refusal %v has no %s cause", err, forge.ReasonRemoteUnschedulable)
	}
	if err := phi.Create(ctx, webhooktest.ShadowPod("fits", webhooktest.Twin("phi"), "phi", "1", "")); err != nil {
		t.Errorf("a pod a node has room for: %v", err)
	}
}
