package shadowpod

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/podsecurity"
	"github.com/liqo-go/liqo/test/harness"
)

// TestPodSecurityRefusalReported creates, in a namespace labelled as the
// provider labels twin namespaces, a privileged ShadowPod that no webhook
// vetted (an administrator's, or one stored while the webhook was away):
// the API server's Pod Security Admission refuses its Pod, and the
// ShadowPod's status and Events say why. A fixed spec then runs.
func TestPodSecurityRefusalReported(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "twin-", Labels: podsecurity.NamespaceLabels("")}}
	if err := cl.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Delete(context.Background(), ns) })
	harness.Eventually(ctx, t, "the default ServiceAccount", func() (bool, error) {
		err := cl.Get(ctx, types.NamespacedName{Namespace: ns.Name, Name: "default"}, &corev1.ServiceAccount{})
		return err == nil, client.IgnoreNotFound(err)
	})

	sp := newShadowPod(ns.Name, "privileged")
	sp.Spec.Pod.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	if err := cl.Create(ctx, sp); err != nil {
		t.Fatal(err)
	}
	waitStatus(ctx, t, sp, "Ready False PodCreationFailed, naming Pod Security", func(got *offv1beta1.ShadowPod) bool {
		c := meta.FindStatusCondition(got.Status.Conditions, ConditionReady)
		return hasCondition(ReasonCreationFailed)(got) &&
			strings.Contains(c.Message, `violates PodSecurity "baseline:latest"`) && strings.Contains(c.Message, "privileged")
	})
	waitEvent(ctx, t, sp, corev1.EventTypeWarning, EventCreationFailed)
	if err := cl.Get(ctx, client.ObjectKeyFromObject(sp), &corev1.Pod{}); err == nil {
		t.Error("the privileged Pod exists")
	}

	if err := cl.Get(ctx, client.ObjectKeyFromObject(sp), sp); err != nil {
		t.Fatal(err)
	}
	sp.Spec.Pod.Containers[0].SecurityContext = nil
	if err := cl.Update(ctx, sp); err != nil {
		t.Fatal(err)
	}
	pod := waitPod(ctx, t, sp, " after the fix", nil)
	if a := pod.Spec.AutomountServiceAccountToken; a == nil || *a {
		t.Errorf("the Pod mounts the provider's token: automountServiceAccountToken = %v", a)
	}
}
