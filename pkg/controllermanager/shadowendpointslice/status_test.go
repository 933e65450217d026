package shadowendpointslice

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/kit"
)

func TestUpdateStatus(t *testing.T) {
	ses := &offv1beta1.ShadowEndpointSlice{ObjectMeta: metav1.ObjectMeta{Generation: 3}}
	updateStatus(ses, synced(2))
	c := meta.FindStatusCondition(ses.Status.Conditions, ConditionReady)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != ReasonSynced || c.ObservedGeneration != 3 || ses.Status.Endpoints != 2 {
		t.Fatalf("synced: got %+v", ses.Status)
	}

	// The same outcome again changes nothing, so no write follows.
	c.LastTransitionTime = metav1.NewTime(time.Unix(1, 0))
	before := ses.Status.DeepCopy()
	updateStatus(ses, synced(2))
	if !equality.Semantic.DeepEqual(before, &ses.Status) {
		t.Errorf("an unchanged outcome changed the status:\n got %+v\nwant %+v", ses.Status, before)
	}

	// A failure: False, no endpoints, a bounded message.
	updateStatus(ses, outcome{reason: ReasonConflict, message: strings.Repeat("x", 40000)})
	c = meta.FindStatusCondition(ses.Status.Conditions, ConditionReady)
	switch {
	case c.Status != metav1.ConditionFalse || c.Reason != ReasonConflict || readyReason(ses) != ReasonConflict:
		t.Errorf("conflict: got %+v", c)
	case ses.Status.Endpoints != 0:
		t.Errorf("endpoints %d during a conflict, want 0", ses.Status.Endpoints)
	case len(c.Message) != kit.MaxConditionMessage || !strings.HasSuffix(c.Message, "..."):
		t.Errorf("message of %d characters, want %d ending in ...", len(c.Message), kit.MaxConditionMessage)
	case c.LastTransitionTime.Equal(&metav1.Time{Time: time.Unix(1, 0)}):
		t.Errorf("the transition time did not move with the status")
	}
}
