package forge

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestEvent(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop", UID: "local-uid"}}
	at := metav1.NewTime(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC))
	later := metav1.NewTime(at.Add(time.Minute))
	cases := []struct {
		name      string
		remote    corev1.Event
		wantCount int32
		wantFirst metav1.Time
		wantLast  metav1.Time
		wantFrom  string
	}{
		{name: "legacy event", wantCount: 3, wantFirst: at, wantLast: later, wantFrom: "kubelet",
			remote: corev1.Event{Count: 3, FirstTimestamp: at, LastTimestamp: later, Source: corev1.EventSource{Component: "kubelet", Host: "worker-0"}}},
		{name: "events.k8s.io event (the scheduler's)", wantCount: 1, wantFirst: at, wantLast: at, wantFrom: "default-scheduler",
			remote: corev1.Event{EventTime: metav1.NewMicroTime(at.Time), ReportingController: "default-scheduler"}},
		{name: "a series", wantCount: 7, wantFirst: at, wantLast: later, wantFrom: "kubelet",
			remote: corev1.Event{EventTime: metav1.NewMicroTime(at.Time), ReportingController: "kubelet",
				Series: &corev1.EventSeries{Count: 7, LastObservedTime: metav1.NewMicroTime(later.Time)}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := c.remote
			r.Name, r.Namespace, r.Reason, r.Message, r.Type = "web-1.abc", "shop-rome", "Pulled", "pulled", corev1.EventTypeNormal
			r.InvolvedObject = corev1.ObjectReference{Kind: "Pod", Namespace: "shop-rome", Name: "web-1", UID: "remote-uid", FieldPath: "spec.containers{app}"}
			got := Event(&r, pod, "milan")
			if got.Name != r.Name || got.Namespace != "shop" || got.InvolvedObject.UID != "local-uid" || got.InvolvedObject.Namespace != "shop" ||
				got.InvolvedObject.FieldPath != "spec.containers{app}" {
				t.Errorf("target = %s/%s %+v", got.Namespace, got.Name, got.InvolvedObject)
			}
			if got.Count != c.wantCount || !got.FirstTimestamp.Equal(&c.wantFirst) || !got.LastTimestamp.Equal(&c.wantLast) {
				t.Errorf("count %d first %v last %v", got.Count, got.FirstTimestamp, got.LastTimestamp)
			}
			if got.Source.Component != c.wantFrom || got.Source.Host != "milan" || !got.EventTime.IsZero() || got.Series != nil {
				t.Errorf("source %+v eventTime %v series %v", got.Source, got.EventTime, got.Series)
			}
			if EventChanged(got, got.DeepCopy()) {
				t.Error("an Event changed against its own copy")
			}
			bumped := got.DeepCopy()
			bumped.Count++
			if !EventChanged(bumped, got) {
				t.Error("a new count not seen")
			}
		})
	}
}

// TestPVCEvent: an Event of a remote PVC lands on the local PVC of that
// name, as a PersistentVolumeClaim's.
func TestPVCEvent(t *testing.T) {
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data-db-0", Namespace: "shop", UID: "local-pvc"}}
	r := corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "data-db-0.xyz", Namespace: "shop-rome"}, Reason: "ProvisioningSucceeded",
		InvolvedObject: corev1.ObjectReference{Kind: "PersistentVolumeClaim", Namespace: "shop-rome", Name: "data-db-0", UID: "remote-pvc"}}
	got := Event(&r, pvc, "milan")
	if got.Namespace != "shop" || got.InvolvedObject.Kind != "PersistentVolumeClaim" || got.InvolvedObject.Name != "data-db-0" ||
		got.InvolvedObject.UID != "local-pvc" || got.Reason != "ProvisioningSucceeded" || got.Source.Host != "milan" {
		t.Errorf("the PVC's Event copy: %+v", got)
	}
}
