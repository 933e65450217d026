package shadowpod

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TestPodsPullAlways: a consumer's ShadowPod asking to use whatever image
// the node holds (IfNotPresent, Never) gets a pod whose every container
// pulls Always, so the registry, with the consumer's own pull secrets,
// decides whether it may run a private image another tenant pulled there
// (issue 30, finding 8).
func TestPodsPullAlways(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := newNamespace(ctx, t)
	sp := newShadowPod(ns, "reuser")
	sp.Spec.Pod.Containers[0].Image = "registry.example.com/other-tenant/private:1"
	sp.Spec.Pod.Containers[0].ImagePullPolicy = corev1.PullIfNotPresent
	sp.Spec.Pod.InitContainers = []corev1.Container{{Name: "init", Image: "registry.example.com/provider/tools:1",
		ImagePullPolicy: corev1.PullNever, Command: []string{"true"}}}
	if err := cl.Create(ctx, sp); err != nil {
		t.Fatal(err)
	}
	pod := waitPod(ctx, t, sp, "", nil)
	for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		if c.ImagePullPolicy != corev1.PullAlways {
			t.Errorf("container %s pulls %s, want Always", c.Name, c.ImagePullPolicy)
		}
	}
}
