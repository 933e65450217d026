package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/liqo-go/liqo/pkg/proc"
)

// TestPlaygroundSimulated runs `liqoctl playground up --real-nodes 0`:
// with simulated nodes alone nothing runs in a container, so each owner
// runs the liqo-controller-manager binary found next to liqo-playground
// (the playground does not link the manager), and the clusters peer with
// it. Without the binary, up fails before starting anything and says how
// to build it.
func TestPlaygroundSimulated(t *testing.T) {
	bins := build(t, t.TempDir(), "liqoctl", "liqo-playground", "liqo-controller-manager")
	liqoctl, manager := bins["liqoctl"], bins["liqo-controller-manager"]
	dir := t.TempDir()
	run := func(env []string, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, liqoctl, append([]string{"playground", "--dir", dir}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	t.Cleanup(func() { _, _ = run(nil, "down") })

	// The binary missing (moved away, and no PATH to find it on).
	hidden := filepath.Join(t.TempDir(), "liqo-controller-manager")
	if err := os.Rename(manager, hidden); err != nil {
		t.Fatal(err)
	}
	out, err := run([]string{"PATH=/usr/bin:/bin"}, "up", "--clusters", "alone", "--real-nodes", "0", "--nodes", "1", "--no-peer")
	if err == nil || !strings.Contains(out, "neither next to liqo-playground nor on PATH") || !strings.Contains(out, "make liqoctl") {
		t.Errorf("up without the manager binary: err=%v, want an error before anything starts, saying where it looked and how to build it:\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "alone.state.json")); err == nil {
		t.Errorf("up without the manager binary started a cluster anyway")
	}
	if err := os.Rename(hidden, manager); err != nil {
		t.Fatal(err)
	}

	out, err = run(nil, "up", "--clusters", "rome,milan", "--real-nodes", "0", "--nodes", "1")
	if err != nil {
		t.Fatalf("playground up: %v\n%s", err, out)
	}
	for _, want := range []string{"INFO: Virtual node milan is Ready", "milan      Ready    virtual-node",
		"namespace liqo-demo offloaded, twin namespace liqo-demo-rome"} {
		if !strings.Contains(out, want) {
			t.Errorf("up output lacks %q:\n%s", want, out)
		}
	}
	// Each owner runs the manager binary as its child, the one built above.
	var managers []int
	for _, owner := range ownerPIDs(t, dir, "rome", "milan") {
		found := false
		for _, pid := range proc.Children(owner) {
			if exe, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe")); exe == manager {
				found = true
				managers = append(managers, pid)
			}
		}
		if !found {
			t.Errorf("owner %d runs no %s", owner, manager)
		}
	}
	if out, err := run(nil, "down"); err != nil {
		t.Fatalf("playground down: %v\n%s", err, out)
	}
	// down stops the managers with their clusters.
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range managers {
		for proc.Alive(pid) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if proc.Alive(pid) {
			t.Errorf("manager process %d is still alive after down", pid)
		}
	}
}
