package outofband

import (
	"strings"
	"testing"
	"time"

	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	"github.com/liqo-go/liqo/pkg/kit"
	"github.com/liqo-go/liqo/pkg/peering"
)

// TestSetState: the out-of-band condition is set beside the others, its
// transition time moving only with its status.
func TestSetState(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	other := corev1beta1.Condition{Type: corev1beta1.APIServerStatusCondition, Status: corev1beta1.EstablishedStatus}
	pending := state{corev1beta1.PendingStatus, peering.ReasonVerifyingServer, "checking"}

	conds := []corev1beta1.Condition{other}
	if changed := setState(&conds, pending, t0); !changed || len(conds) != 2 || conds[0] != other ||
		conds[1].Type != peering.OutOfBandCondition || conds[1].Reason != peering.ReasonVerifyingServer || !conds[1].LastTransitionTime.Time.Equal(t0) {
		t.Fatalf("added: changed=%v %+v", changed, conds)
	}
	if setState(&conds, pending, t0.Add(time.Minute)) {
		t.Error("the same state again changed the conditions")
	}
	if changed := setState(&conds, state{corev1beta1.PendingStatus, peering.ReasonClaiming, "claiming"}, t0.Add(time.Minute)); !changed ||
		conds[1].Reason != peering.ReasonClaiming || !conds[1].LastTransitionTime.Time.Equal(t0) {
		t.Errorf("another step of the same status: changed=%v %+v (the transition time stays)", changed, conds[1])
	}
	setState(&conds, state{corev1beta1.EstablishedStatus, peering.ReasonPeered, "peered"}, t0.Add(2*time.Minute))
	if !conds[1].LastTransitionTime.Time.Equal(t0.Add(2 * time.Minute)) {
		t.Errorf("a new status keeps the old transition time: %+v", conds[1])
	}
	var long []corev1beta1.Condition
	setState(&long, state{corev1beta1.ErrorStatus, peering.ReasonStepFailed, strings.Repeat("x", kit.MaxConditionMessage+10)}, t0)
	if n := len(long[0].Message); n != kit.MaxConditionMessage || !strings.HasSuffix(long[0].Message, "...") {
		t.Errorf("an overlong message is %d bytes", n)
	}
}

func TestEventType(t *testing.T) {
	for status, want := range map[corev1beta1.ConditionStatusType]string{
		corev1beta1.PendingStatus: "Normal", corev1beta1.EstablishedStatus: "Normal",
		corev1beta1.ErrorStatus: "Warning", corev1beta1.NotReadyStatus: "Warning",
	} {
		if got := eventType(state{status: status}); got != want {
			t.Errorf("%s: %s, want %s", status, got, want)
		}
	}
}
