package playground

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/liqo-go/liqo/pkg/proc"
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

// TestOwnerGone: `up` gives up on an owner only once it is dead or its PID
// runs another program, not while its command line reads empty (a child
// the kernel is still loading; a kernel thread stands in for one here).
func TestOwnerGone(t *testing.T) {
	owner := exec.Command("/bin/sh", "-c", "sleep 30; :", "serve", "--cluster=rome") // ": " keeps sh from exec-ing sleep
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	// Stopped however the test ends, a failed check included.
	t.Cleanup(func() { _ = owner.Process.Kill(); _ = owner.Wait() })
	st := &clusterState{Name: "rome", PID: owner.Process.Pid}
	// Until the kernel has put the child's command line in place it reads
	// empty: the moment `up` once took for a dead owner.
	for deadline := time.Now().Add(10 * time.Second); len(proc.Args(st.PID)) == 0; time.Sleep(time.Millisecond) {
		if ownerGone(st) {
			t.Fatal("an owner still starting (empty command line) was taken for gone")
		}
		if time.Now().After(deadline) {
			t.Fatal("the owner's command line stayed empty for 10 s")
		}
	}
	if ownerGone(st) || !ownerAlive(st) {
		t.Errorf("a live owner (%v) was taken for gone", proc.Args(st.PID))
	}
	if !ownerGone(&clusterState{Name: "milan", PID: st.PID}) {
		t.Error("the owner of rome was taken for milan's")
	}
	_ = owner.Process.Kill()
	_ = owner.Wait()
	if !ownerGone(st) || ownerAlive(st) {
		t.Error("a dead owner was not taken for gone")
	}
	if !ownerGone(&clusterState{Name: "rome", PID: 1}) {
		t.Error("PID 1 was not taken for another program")
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 1 || !proc.Alive(pid) || len(proc.Args(pid)) > 0 {
			continue
		}
		if ownerGone(&clusterState{Name: "rome", PID: pid}) {
			t.Errorf("live process %d with an empty command line was taken for gone", pid)
		}
		if ownerAlive(&clusterState{Name: "rome", PID: pid}) {
			t.Errorf("live process %d with an empty command line was taken for an owner to signal", pid)
		}
		return
	}
	t.Log("no process with an empty command line here: only the other cases were checked")
}
