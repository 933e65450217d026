package testbed

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestPinCPUs pins cluster beta to CPU 1: every one of its components,
// and a process the caller names (a child of this test, as a benchmark's
// controller manager would be), may then run there only, and the cluster
// still serves. Stop removes the cgroup (the leftovers check after the
// package's tests says so).
func TestPinCPUs(t *testing.T) {
	if runtime.NumCPU() < 2 {
		t.Fatalf("pinning a cluster to a CPU of its own needs 2 CPUs, this machine has %d", runtime.NumCPU())
	}
	child := exec.Command("sleep", "600")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	beta := shared.Cluster("beta")
	if err := beta.PinCPUs("1", child.Process.Pid); err != nil {
		t.Fatal(err)
	}
	pids := beta.PIDs()
	if len(pids) == 0 {
		t.Fatal("beta runs no component")
	}
	pids["the caller's process"] = child.Process.Pid
	for name, pid := range pids {
		if got := allowedCPUs(t, pid); got != "1" {
			t.Errorf("%s (pid %d) may run on CPUs %q, want 1", name, pid, got)
		}
	}
	if got := allowedCPUs(t, os.Getpid()); got == "1" {
		t.Errorf("the test process, not named, was pinned too")
	}
	if _, err := beta.Client().Discovery().ServerVersion(); err != nil {
		t.Fatalf("beta's API server, pinned: %v", err)
	}
}

// allowedCPUs is the Cpus_allowed_list of process pid.
func allowedCPUs(t *testing.T, pid int) string {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no Cpus_allowed_list in /proc/%d/status", pid)
	return ""
}
