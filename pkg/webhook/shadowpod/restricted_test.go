package shadowpod_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/podsecurity"
	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
	"github.com/liqo-go/liqo/pkg/webhook/podpolicy"
)

// hardened is a ShadowPod of consumer id meeting the restricted level.
func hardened(id, name string) *offv1beta1.ShadowPod {
	sp := webhooktest.ShadowPod(name, webhooktest.Twin(id), id, "100m", "")
	sp.Spec.Pod.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](1000),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
	sp.Spec.Pod.Containers[0].SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false),
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
	return sp
}

// TestShadowPodRestrictedLevel runs the webhook of a provider that chose
// the restricted level: a pod the baseline admits is refused for each
// hardening it lacks, running as root is refused, a hardened pod passes.
func TestShadowPodRestrictedLevel(t *testing.T) {
	ctx := context.Background()
	webhooktest.Consumer(t, "upsilon", offv1beta1.SoftLimitsEnforcement, webhooktest.List("cpu", "10", "pods", "100"))
	v := directValidator(podpolicy.PodPolicy{Level: podsecurity.Restricted})

	webhooktest.WantRefused(t, "a pod without hardening", v.Handle(ctx, webhooktest.ShadowPodReview(t, "upsilon", webhooktest.ShadowPod("plain", webhooktest.Twin("upsilon"), "upsilon", "", ""), nil, false, nil)),
		"spec.pod.containers[0].securityContext.allowPrivilegeEscalation must be false",
		"spec.pod.containers[0].securityContext.runAsNonRoot must be true",
		"spec.pod.containers[0].securityContext.seccompProfile.type must be RuntimeDefault or Localhost",
		"spec.pod.containers[0].securityContext.capabilities.drop must include ALL",
		"Pod Security restricted")
	root := hardened("upsilon", "root")
	root.Spec.Pod.SecurityContext.RunAsUser = ptr.To[int64](0)
	webhooktest.WantRefused(t, "a pod running as root", v.Handle(ctx, webhooktest.ShadowPodReview(t, "upsilon", root, nil, false, nil)),
		"spec.pod.securityContext.runAsUser must not be 0")
	if resp := v.Handle(ctx, webhooktest.ShadowPodReview(t, "upsilon", hardened("upsilon", "hardened"), nil, false, nil)); !resp.Allowed {
		t.Errorf("a hardened pod at restricted: %v", resp.Result)
	}

	// The same webhook at the default level admits the plain pod.
	v = directValidator(podpolicy.PodPolicy{})
	if resp := v.Handle(ctx, webhooktest.ShadowPodReview(t, "upsilon", webhooktest.ShadowPod("plain", webhooktest.Twin("upsilon"), "upsilon", "", ""), nil, false, nil)); !resp.Allowed {
		t.Errorf("a plain pod at baseline: %v", resp.Result)
	}
}

// TestShadowPodPolicyOptions checks, through the webhook, that a provider's
// lists admit what they name and nothing else.
func TestShadowPodPolicyOptions(t *testing.T) {
	ctx := context.Background()
	webhooktest.Consumer(t, "chi", offv1beta1.SoftLimitsEnforcement, webhooktest.List("cpu", "10", "pods", "100"))
	for _, o := range []client.Object{
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "chi-batch"}, Value: 100},
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "chi-other"}, Value: 100},
		&nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "chi-gvisor"}, Handler: "runsc"},
		&nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "chi-privileged"}, Handler: "runc"},
	} {
		if err := webhooktest.Cl.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = webhooktest.Cl.Delete(context.Background(), o) })
	}
	v := directValidator(podpolicy.PodPolicy{PriorityClasses: []string{"chi-batch"}, RuntimeClasses: []string{"chi-gvisor"},
		Annotations: []string{"example.com/*"}, VolumeTypes: []string{"csi"}})
	sp := webhooktest.ShadowPod("allowed", webhooktest.Twin("chi"), "chi", "", "")
	sp.Annotations = map[string]string{"example.com/team": "shop"}
	sp.Spec.Pod.PriorityClassName = "chi-batch"
	sp.Spec.Pod.RuntimeClassName = ptr.To("chi-gvisor")
	sp.Spec.Pod.Volumes = []corev1.Volume{{Name: "secrets", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "secrets-store.csi.k8s.io"}}}}
	if resp := v.Handle(ctx, webhooktest.ShadowPodReview(t, "chi", sp, nil, false, nil)); !resp.Allowed {
		t.Errorf("a pod within the provider's lists: %v", resp.Result)
	}
	other := sp.DeepCopy()
	other.Name = "other"
	other.Spec.Pod.PriorityClassName = "chi-other"
	other.Spec.Pod.RuntimeClassName = ptr.To("chi-privileged")
	webhooktest.WantRefused(t, "classes outside the lists", v.Handle(ctx, webhooktest.ShadowPodReview(t, "chi", other, nil, false, nil)),
		`spec.pod.priorityClassName must be empty or one of chi-batch, got "chi-other"`,
		`spec.pod.runtimeClassName "chi-privileged" is not offered by the provider, which offers chi-gvisor`,
		"[rule: offloading.podPolicy.maxPriority and allowedPriorityClasses (--max-pod-priority, --allowed-priority-classes; never a system class)]",
		"[rule: offloading.podPolicy.offeredRuntimeClasses (--offered-runtime-classes)]")
	other.Spec.Pod.PriorityClassName = "system-cluster-critical"
	webhooktest.WantRefused(t, "a system class, whatever the list", v.Handle(ctx, webhooktest.ShadowPodReview(t, "chi", other, nil, false, nil)),
		`spec.pod.priorityClassName "system-cluster-critical" is a system priority class`)
}
