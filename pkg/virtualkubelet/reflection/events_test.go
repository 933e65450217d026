package reflection

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/test/harness"
)

// TestRemoteEvents: what happens to the provider's pod (an Event a kubelet,
// user or controller records) shows on the local pod, except its
// scheduling there: the local pod has its own Scheduled Event.
func TestRemoteEvents(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	twin := offload(ctx, t, "events")
	if err := consumer.Create(ctx, testPod("events", "observed")); err != nil {
		t.Fatal(err)
	}
	local, remote := waitRunning(ctx, t, "events", twin, "observed")

	// The provider's scheduler records its Scheduled Event before the
	// Event below exists, whose copy the test then waits for.
	harness.Eventually(ctx, t, "the provider's Scheduled Event of its pod", func() (bool, error) {
		var remoteEvents corev1.EventList
		if err := provider.List(ctx, &remoteEvents, client.InNamespace(twin)); err != nil {
			return false, err
		}
		for _, e := range remoteEvents.Items {
			if e.InvolvedObject.Name == remote.Name && e.Reason == ReasonScheduled {
				return true, nil
			}
		}
		return false, nil
	})

	// An Event recorded on the provider about its pod, as a kubelet would.
	now := time.Now()
	ev := &corev1.Event{}
	ev.Namespace, ev.Name = twin, "observed.remote-probe"
	ev.InvolvedObject = corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: twin, Name: remote.Name, UID: remote.UID}
	ev.Reason, ev.Message, ev.Type = "Unhealthy", "Readiness probe failed: connection refused", corev1.EventTypeWarning
	ev.Source.Component, ev.Count = "kubelet", 3
	ev.FirstTimestamp.Time, ev.LastTimestamp.Time = now.Add(-time.Minute), now
	if err := provider.Create(ctx, ev); err != nil {
		t.Fatal(err)
	}

	byReason := map[string]corev1.Event{}
	harness.Eventually(ctx, t, "the probe failure on the local pod", func() (bool, error) {
		var events corev1.EventList
		if err := consumer.List(ctx, &events, client.InNamespace("events"), client.MatchingFieldsSelector{
			Selector: fields.OneTermEqualSelector("involvedObject.uid", string(local.UID))}); err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.Source.Host == providerID {
				byReason[e.Reason] = e
			}
		}
		_, unhealthy := byReason["Unhealthy"]
		return unhealthy, nil
	})
	if e, copied := byReason[ReasonScheduled]; copied {
		t.Errorf("the provider's Scheduled Event was copied: %s", e.Message)
	}
	if got := byReason["Unhealthy"]; got.Count != 3 || got.Type != corev1.EventTypeWarning || got.Message != ev.Message ||
		got.Source.Component != "kubelet" {
		t.Errorf("copied Event = %+v", got)
	}

	// A repeated remote Event updates the copy.
	ev.Count, ev.LastTimestamp.Time = 4, time.Now()
	if err := provider.Update(ctx, ev); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(ctx, t, "the copy's count updated", func() (bool, error) {
		var got corev1.Event
		err := consumer.Get(ctx, client.ObjectKey{Namespace: "events", Name: ev.Name}, &got)
		return err == nil && got.Count == 4, client.IgnoreNotFound(err)
	})
}
