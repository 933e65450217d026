package kit

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSetCondition(t *testing.T) {
	var conds []metav1.Condition
	if !SetCondition(&conds, 3, Condition{Type: "Ready", OK: true, Reason: "Synced", Message: "fine"}) {
		t.Fatal("a new condition must report a change")
	}
	first := conds[0].LastTransitionTime
	if SetCondition(&conds, 3, Condition{Type: "Ready", OK: true, Reason: "Synced", Message: "fine"}) {
		t.Fatal("the same outcome must not report a change")
	}
	if conds[0].LastTransitionTime != first || conds[0].ObservedGeneration != 3 {
		t.Fatalf("unchanged outcome moved the condition: %+v", conds[0])
	}
	SetCondition(&conds, 4, Condition{Type: "Ready", Reason: "bad reason!", Message: strings.Repeat("x", MaxConditionMessage+10)})
	c := meta.FindStatusCondition(conds, "Ready")
	if c.Status != metav1.ConditionFalse || c.Reason != "Unknown" || len(c.Message) != MaxConditionMessage || !strings.HasSuffix(c.Message, "...") {
		t.Fatalf("invalid reason or long message not made valid: status %s reason %q len %d", c.Status, c.Reason, len(c.Message))
	}
	if IsTrue(conds, "Ready") {
		t.Fatal("IsTrue on a False condition")
	}
	SetCondition(&conds, 5, Condition{Type: "Ready", OK: true, Unknown: true, Reason: "NodeLost"})
	if c := meta.FindStatusCondition(conds, "Ready"); c.Status != metav1.ConditionUnknown || c.Reason != "NodeLost" {
		t.Fatalf("Unknown must win over OK: %+v", c)
	}
	if ValidReason("bad reason!") || !ValidReason("PodReady") {
		t.Fatal("ValidReason disagrees with the API server's pattern")
	}
}

// typed is a condition of its own type, as VirtualNode's.
type typed struct {
	Type, Status, Reason string
	Since                metav1.Time
}

func typedFields(c *typed) (string, string, *metav1.Time) { return c.Type, c.Status, &c.Since }

func TestSetTypedCondition(t *testing.T) {
	var conds []typed
	if !SetTypedCondition(&conds, typed{Type: "Node", Status: "Creating", Reason: "Waiting"}, typedFields) {
		t.Fatal("a new condition must report a change")
	}
	first := conds[0].Since
	if first.IsZero() {
		t.Fatal("a new condition has no transition time")
	}
	if SetTypedCondition(&conds, typed{Type: "Node", Status: "Creating", Reason: "Waiting"}, typedFields) {
		t.Fatal("the same condition must not report a change")
	}
	if !SetTypedCondition(&conds, typed{Type: "Node", Status: "Creating", Reason: "Probing"}, typedFields) {
		t.Fatal("a new reason must report a change")
	}
	if conds[0].Since != first || conds[0].Reason != "Probing" {
		t.Fatalf("a new reason with the same status moved the transition time or kept the reason: %+v", conds[0])
	}
	SetTypedCondition(&conds, typed{Type: "VirtualKubelet", Status: "Running"}, typedFields)
	first.Time = first.Add(-time.Hour)
	conds[0].Since = first
	SetTypedCondition(&conds, typed{Type: "Node", Status: "Running", Reason: "Ready"}, typedFields)
	if len(conds) != 2 || conds[0].Status != "Running" || !conds[0].Since.After(first.Time) || conds[1].Type != "VirtualKubelet" {
		t.Fatalf("a status change must replace the condition of its type and move its transition time: %+v", conds)
	}
}
