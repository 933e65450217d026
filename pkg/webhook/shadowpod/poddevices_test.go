package shadowpod_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
)

// TestDedicatedNodesTakeWhatTheyHold: a consumer granted GPUs may
// tolerate the GPU nodes' taint with a pod requesting a GPU; the same
// toleration without the request is refused, and so is the request from a
// consumer whose Quota grants no GPU (issue 30, finding 8).
func TestDedicatedNodesTakeWhatTheyHold(t *testing.T) {
	ctx := context.Background()
	gpu := corev1.Toleration{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
	withGPU := func(name, origin string) *offv1beta1.ShadowPod {
		sp := webhooktest.ShadowPod(name, webhooktest.Twin(origin), origin, "100m", "")
		sp.Spec.Pod.Containers[0].Resources.Limits = webhooktest.List("nvidia.com/gpu", "1")
		sp.Spec.Pod.Tolerations = []corev1.Toleration{gpu}
		return sp
	}
	webhooktest.Consumer(t, "gpu-granted", offv1beta1.SoftLimitsEnforcement, webhooktest.List("cpu", "10", "memory", "10Gi", "pods", "10", "nvidia.com/gpu", "2"))
	tau := webhooktest.AsConsumer(t, "gpu-granted", webhooktest.Twin("gpu-granted"))
	if err := tau.Create(ctx, withGPU("trains", "gpu-granted")); err != nil {
		t.Errorf("a pod requesting a granted GPU and tolerating the GPU nodes: %v", err)
	}
	idle := webhooktest.ShadowPod("idles", webhooktest.Twin("gpu-granted"), "gpu-granted", "100m", "")
	idle.Spec.Pod.Tolerations = []corev1.Toleration{gpu}
	webhooktest.WantDenied(t, "a GPU consumer's pod asking for no GPU", tau.Create(ctx, idle), "offloading.podPolicy.dedicatedTaintKeys")

	webhooktest.Consumer(t, "gpu-denied", offv1beta1.SoftLimitsEnforcement, webhooktest.List("cpu", "10", "memory", "10Gi", "pods", "10"))
	upsilon := webhooktest.AsConsumer(t, "gpu-denied", webhooktest.Twin("gpu-denied"))
	webhooktest.WantDenied(t, "a GPU from a consumer granted none", upsilon.Create(ctx, withGPU("trains", "gpu-denied")), "nvidia.com/gpu requested 1, none granted")
}
