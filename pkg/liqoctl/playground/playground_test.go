package playground

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// These cover argument checks that fail before any cluster starts; the full
// up/status/down cycle runs in test/e2e.

func TestDownUnknownCluster(t *testing.T) {
	l := layout{t.TempDir()}
	var out bytes.Buffer
	err := down(&out, l, []string{"naples"})
	if err == nil || !strings.Contains(err.Error(), `unknown cluster "naples"`) {
		t.Fatalf("down of a cluster in an empty playground: got %v", err)
	}

	if err := l.write(&clusterState{Name: "rome", Phase: phaseReady}); err != nil {
		t.Fatal(err)
	}
	err = down(&out, l, []string{"naples"})
	if err == nil || !strings.Contains(err.Error(), "has rome") {
		t.Fatalf("down of an unknown cluster: got %v, want the known names listed", err)
	}
}

func TestDownNothingRunning(t *testing.T) {
	var out bytes.Buffer
	if err := down(&out, layout{t.TempDir()}, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "nothing to stop") {
		t.Errorf("down with nothing running said: %q", out.String())
	}
}

func TestUpRejectsBadInput(t *testing.T) {
	cases := map[string]upOptions{
		"listed twice":      {clusters: []string{"rome", "rome"}, nodes: 1},
		"not valid":         {clusters: []string{"Rome"}, nodes: 1},
		"must not be neg":   {clusters: []string{"rome"}, nodes: -1},
		"name at least one": {},
	}
	for want, o := range cases {
		var out bytes.Buffer
		err := up(context.Background(), &out, layout{t.TempDir()}, o)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("up(%+v): got %v, want an error containing %q", o, err, want)
		}
	}
}

func TestOwnerAliveRejectsStrangers(t *testing.T) {
	// PID 1 is alive but is not our `playground serve`: never ours to signal.
	if ownerAlive(&clusterState{Name: "rome", PID: 1}) {
		t.Error("PID 1 was taken for a playground owner")
	}
	if ownerAlive(&clusterState{Name: "rome", PID: 0}) {
		t.Error("PID 0 was taken for a playground owner")
	}
}
