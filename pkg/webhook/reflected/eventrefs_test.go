package reflected_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
)

// TestEventsAboutProviderObjects records, as a consumer with its own
// credentials, Events in its tenant namespace about the provider's Node
// and a kube-system pod, which the API server's validation lets through
// (issue 30, finding 8): each is refused naming the field, and nothing is
// stored; an Event about the consumer's own slice passes.
func TestEventsAboutProviderObjects(t *testing.T) {
	ctx := context.Background()
	liar, _ := webhooktest.ReflectingConsumer(t, "event-liar", "app")
	webhooktest.RemoteControlPlane(t, "event-liar")
	tenant := consts.TenantNamespace("event-liar")
	event := func(name string, edit func(e *corev1.Event)) *corev1.Event {
		e := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tenant},
			InvolvedObject: corev1.ObjectReference{Kind: "ResourceSlice", Namespace: tenant, Name: "slice"},
			Reason:         "NodeNotReady", Message: "kubelet stopped posting node status", Type: corev1.EventTypeWarning, Count: 1}
		if edit != nil {
			edit(e)
		}
		return e
	}
	webhooktest.Eventually(t, "the RBAC of the Events", func(ctx context.Context) (bool, error) {
		err := liar.Create(ctx, event("own", nil))
		return err == nil, err
	})
	// An Event with an eventTime may name an object of any namespace.
	newStyle := func(e *corev1.Event) {
		e.EventTime = metav1.NewMicroTime(time.Now())
		e.ReportingController, e.ReportingInstance, e.Action = "example.com/x", "x-1", "Check"
	}
	for _, tc := range []struct {
		name, field string
		edit        func(e *corev1.Event)
	}{
		{"about a provider's Node", "involvedObject names Node \"cp-0\"", func(e *corev1.Event) {
			e.InvolvedObject = corev1.ObjectReference{Kind: "Node", Name: "cp-0", Namespace: tenant}
		}},
		{"relating a provider's Node", "related names Node \"cp-0\"", func(e *corev1.Event) {
			newStyle(e)
			e.Related = &corev1.ObjectReference{Kind: "Node", Name: "cp-0"}
		}},
		{"about a kube-system pod", "involvedObject names Pod \"kube-apiserver-cp-0\" in namespace \"kube-system\"", func(e *corev1.Event) {
			newStyle(e)
			e.InvolvedObject = corev1.ObjectReference{Kind: "Pod", Name: "kube-apiserver-cp-0", Namespace: "kube-system"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := event("lie", tc.edit)
			err := liar.Create(ctx, e)
			if !apierrors.IsForbidden(err) || !webhooktest.ContainsAll(err.Error(), `admission webhook "event.validate.liqo.io" denied the request`,
				tc.field, "[rule: the provider's Event rule") {
				t.Errorf("err = %v, want the Events' webhook's refusal naming %q", err, tc.field)
			}
			if err := webhooktest.Cl.Get(ctx, client.ObjectKeyFromObject(e), &corev1.Event{}); !apierrors.IsNotFound(err) {
				t.Errorf("the Event is stored (%v)", err)
				_ = webhooktest.Cl.Delete(ctx, e)
			}
		})
	}
}
