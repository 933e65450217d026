package forge

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestRemoteUnschedulable(t *testing.T) {
	bound := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	unschedulable := func(at time.Time, msg string) corev1.PodCondition {
		return corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			LastTransitionTime: metav1.NewTime(at), Message: msg}
	}
	tests := []struct {
		name  string
		pod   corev1.Pod
		ok    bool
		since time.Time
	}{
		{"unschedulable after the binding", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending,
			Conditions: []corev1.PodCondition{unschedulable(bound.Add(time.Minute), "0/2 nodes are available")}}}, true, bound.Add(time.Minute)},
		{"a provider clock in the past counts from the binding", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending,
			Conditions: []corev1.PodCondition{unschedulable(bound.Add(-time.Hour), "x")}}}, true, bound},
		{"scheduled", corev1.Pod{Spec: corev1.PodSpec{NodeName: "n"}, Status: corev1.PodStatus{Phase: corev1.PodPending,
			Conditions: []corev1.PodCondition{unschedulable(bound, "x")}}}, false, time.Time{}},
		{"running", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{unschedulable(bound, "x")}}}, false, time.Time{}},
		{"pending, not yet tried", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending}}, false, time.Time{}},
		{"gated, not unschedulable", corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonSchedulingGated}}}}, false, time.Time{}},
	}
	for _, tc := range tests {
		since, _, ok := RemoteUnschedulable(&tc.pod, bound)
		if ok != tc.ok || !since.Equal(tc.since) {
			t.Errorf("%s: = %v, %v; want %v, %v", tc.name, since, ok, tc.since, tc.ok)
		}
	}
}

// A provider's message is shown bounded and as valid UTF-8, whatever it
// sends.
func TestRemoteText(t *testing.T) {
	long := strings.Repeat("é", 1000) + "\xff"
	got := RemoteText(long)
	if len(got) > maxRemoteMessage+len("…") || !utf8.ValidString(got) {
		t.Errorf("RemoteText of %d bytes = %d bytes, valid %v", len(long), len(got), utf8.ValidString(got))
	}
	if RemoteText("0/2 nodes are available") != "0/2 nodes are available" {
		t.Error("a short message changed")
	}
}

func TestFailedStatus(t *testing.T) {
	local := &corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	s := FailedStatus(local, ReasonRemoteUnschedulable, "gone")
	if !GivenUp(&s) || s.Message != "gone" || s.Conditions[0].Status != corev1.ConditionTrue || s.Conditions[1].Status != corev1.ConditionFalse {
		t.Errorf("FailedStatus = %+v", s)
	}
	if local.Phase != corev1.PodPending || local.Conditions[1].Status != corev1.ConditionTrue {
		t.Errorf("the local status was changed: %+v", local)
	}
}
