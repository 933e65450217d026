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
