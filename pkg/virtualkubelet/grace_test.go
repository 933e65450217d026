package virtualkubelet

import (
	"errors"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
)

// TestUnreachableGrace: the node stays Ready (its network unavailable)
// while the remote cluster is unreachable for less than the grace, turns
// NotReady at its end, and Ready at once when the remote is back; without
// a grace, or at the first probe, NotReady is immediate.
func TestUnreachableGrace(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	down := errors.New("connection refused")
	p := newProvider(NodeConfig{Name: "n", RemoteClusterID: "r", UnreachableGrace: time.Minute}, nil, logr.Discard())
	step := func(err error, at time.Duration, wantReady bool, wantReason string) {
		t.Helper()
		p.record(err, "", t0.Add(at))
		p.discardChange()
		if got, why := p.nodeReady(), p.reason(); got != wantReady || why != wantReason {
			t.Fatalf("at %s: ready %v (%s), want %v (%s)", at, got, why, wantReady, wantReason)
		}
	}
	step(nil, 0, true, ReasonRemoteReachable)
	step(down, 10*time.Second, true, ReasonUnreachableInGrace)
	step(down, 69*time.Second, true, ReasonUnreachableInGrace)
	if n := p.node(); !readyOf(n).LastTransitionTime.Time.Equal(t0) {
		t.Errorf("the Ready condition moved during the grace: %+v", readyOf(n))
	}
	step(down, 70*time.Second, false, ReasonRemoteUnreachable)
	if n := p.node(); !readyOf(n).LastTransitionTime.Time.Equal(t0.Add(70 * time.Second)) {
		t.Errorf("NotReady since %s, want the end of the grace", readyOf(n).LastTransitionTime)
	}
	step(nil, 80*time.Second, true, ReasonRemoteReachable)
	step(down, 90*time.Second, true, ReasonUnreachableInGrace)
	step(nil, 95*time.Second, true, ReasonRemoteReachable)

	none := newProvider(NodeConfig{Name: "n", RemoteClusterID: "r"}, nil, logr.Discard())
	none.record(nil, "", t0)
	if none.record(down, "", t0.Add(time.Second)); none.nodeReady() {
		t.Error("without a grace the node stayed Ready")
	}
	first := newProvider(NodeConfig{Name: "n", RemoteClusterID: "r", UnreachableGrace: time.Minute}, nil, logr.Discard())
	if first.record(down, "", t0); first.nodeReady() {
		t.Error("a first probe that fails started a grace")
	}
}

func readyOf(n *corev1.Node) corev1.NodeCondition {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c
		}
	}
	return corev1.NodeCondition{}
}
