package webhook

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/podsecurity"
)

// hardened is a ShadowPod of consumer id meeting the restricted level.
func hardened(id, name string) *offv1beta1.ShadowPod {
	sp := shadowPod(name, twin(id), id, "100m", "")
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
	consumer(t, "upsilon", offv1beta1.SoftLimitsEnforcement, list("cpu", "10", "pods", "100"))
	v := directValidator()
	v.policy = PodPolicy{Level: podsecurity.Restricted}

	wantRefused(t, "a pod without hardening", v.Handle(ctx, review(t, "upsilon", shadowPod("plain", twin("upsilon"), "upsilon", "", ""), nil, false, nil)),
		"spec.pod.containers[0].securityContext.allowPrivilegeEscalation must be false",
		"spec.pod.containers[0].securityContext.runAsNonRoot must be true",
		"spec.pod.containers[0].securityContext.seccompProfile.type must be RuntimeDefault or Localhost",
		"spec.pod.containers[0].securityContext.capabilities.drop must include ALL",
		"Pod Security restricted")
	root := hardened("upsilon", "root")
	root.Spec.Pod.SecurityContext.RunAsUser = ptr.To[int64](0)
	wantRefused(t, "a pod running as root", v.Handle(ctx, review(t, "upsilon", root, nil, false, nil)),
		"spec.pod.securityContext.runAsUser must not be 0")
	if resp := v.Handle(ctx, review(t, "upsilon", hardened("upsilon", "hardened"), nil, false, nil)); !resp.Allowed {
		t.Errorf("a hardened pod at restricted: %v", resp.Result)
	}

	// The same webhook at the default level admits the plain pod.
	v.policy = PodPolicy{}
	if resp := v.Handle(ctx, review(t, "upsilon", shadowPod("plain", twin("upsilon"), "upsilon", "", ""), nil, false, nil)); !resp.Allowed {
		t.Errorf("a plain pod at baseline: %v", resp.Result)
	}
}

// TestShadowPodPolicyOptions checks, through the webhook, that a provider's
// allow-lists admit what they name and nothing else.
func TestShadowPodPolicyOptions(t *testing.T) {
	ctx := context.Background()
	consumer(t, "chi", offv1beta1.SoftLimitsEnforcement, list("cpu", "10", "pods", "100"))
	v := directValidator()
	v.policy = PodPolicy{PriorityClasses: []string{"consumer-batch"}, RuntimeClasses: []string{"gvisor"},
		Annotations: []string{"prometheus.io/*"}, VolumeTypes: []string{"ephemeral"}}
	sp := shadowPod("allowed", twin("chi"), "chi", "", "")
	sp.Annotations = map[string]string{"prometheus.io/scrape": "true"}
	sp.Spec.Pod.PriorityClassName = "consumer-batch"
	sp.Spec.Pod.RuntimeClassName = ptr.To("gvisor")
	sp.Spec.Pod.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
		VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, Resources: corev1.VolumeResourceRequirements{Requests: list("storage", "1Gi")}}}}}}}
	if resp := v.Handle(ctx, review(t, "chi", sp, nil, false, nil)); !resp.Allowed {
		t.Errorf("a pod within the provider's allow-lists: %v", resp.Result)
	}
	other := sp.DeepCopy()
	other.Name = "other"
	other.Spec.Pod.PriorityClassName = "system-cluster-critical"
	other.Spec.Pod.RuntimeClassName = ptr.To("runc-privileged")
	wantRefused(t, "classes outside the allow-lists", v.Handle(ctx, review(t, "chi", other, nil, false, nil)),
		`spec.pod.priorityClassName must be empty or one of consumer-batch, got "system-cluster-critical"`,
		`spec.pod.runtimeClassName must be empty or one of gvisor, got "runc-privileged"`)
}
