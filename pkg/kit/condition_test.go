package kit

import (
	"strings"
	"testing"

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

// shapedCondition is a condition of the reference system's shape, with
// types of its own as the Liqo-compatible kinds have.
type (
	shapedType      string
	shapedStatus    string
	shapedCondition struct {
		Type               shapedType
		Status             shapedStatus
		Reason, Message    string
		LastTransitionTime metav1.Time
	}
)

func shapedFields(c *shapedCondition) ConditionFields[shapedType, shapedStatus] {
	return ConditionFields[shapedType, shapedStatus]{Type: &c.Type, Status: &c.Status, Reason: &c.Reason, Message: &c.Message,
		LastTransitionTime: &c.LastTransitionTime}
}

func TestSetConditionOf(t *testing.T) {
	t1 := metav1.Unix(1000, 0)
	t2 := metav1.Unix(2000, 0)
	conds := []shapedCondition{{Type: "Other", Status: "Accepted"}}
	if !SetConditionOf(&conds, shapedFields, "Auth", "Accepted", "Granted", "ok", t1) {
		t.Fatal("a new condition must report a change")
	}
	if len(conds) != 2 || conds[1] != (shapedCondition{Type: "Auth", Status: "Accepted", Reason: "Granted", Message: "ok", LastTransitionTime: t1}) {
		t.Fatalf("condition not appended as set: %+v", conds)
	}
	if SetConditionOf(&conds, shapedFields, "Auth", "Accepted", "Granted", "ok", t2) || conds[1].LastTransitionTime != t1 {
		t.Fatalf("the same outcome must change nothing: %+v", conds[1])
	}
	if !SetConditionOf(&conds, shapedFields, "Auth", "Accepted", "Granted", "still ok", t2) || conds[1].LastTransitionTime != t1 {
		t.Fatalf("a new message keeps the transition time: %+v", conds[1])
	}
	long := strings.Repeat("x", MaxConditionMessage+10)
	if !SetConditionOf(&conds, shapedFields, "Auth", "Denied", "Refused", long, t2) {
		t.Fatal("a new status must report a change")
	}
	if c := conds[1]; c.Status != "Denied" || c.LastTransitionTime != t2 || len(c.Message) != MaxConditionMessage || conds[0].Type != "Other" {
		t.Fatalf("status change not set, message not cut, or another condition touched: %+v", conds)
	}
}
