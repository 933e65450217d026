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

// TestRemoteEvents: what happens to the provider's pod (its scheduling
// there, an Event a user or controller records) shows on the local pod.
func TestRemoteEvents(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	twin := offload(ctx, t, "events")
	if err := consumer.Create(ctx, testPod("events", "observed")); err != nil {
		t.Fatal(err)
	}
	local, remote := waitRunning(ctx, t, "events", twin, "observed")

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
	harness.Eventually(ctx, t, "the remote scheduling and the probe failure on the local pod", func() (bool, error) {
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
		_, scheduled := byReason["Scheduled"]
		_, unhealthy := byReason["Unhealthy"]
		return scheduled && unhealthy, nil
	})
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
