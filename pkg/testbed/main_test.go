package testbed

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/liqo-go/liqo/pkg/proc"
)

// shared is the two-cluster testbed every test of this package uses: starting
// control planes is the expensive part, so it happens once.
var shared *Testbed

func TestMain(m *testing.M) {
	if os.Getenv(crashHelperEnv) != "" {
		runCrashHelper()
		return
	}
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	tb, err := Start(ctx, Options{Progress: os.Stderr}, ClusterSpec{Name: "alpha"}, ClusterSpec{Name: "beta"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the testbed:", err)
		return 1
	}
	shared = tb
	code := m.Run()
	if code != 0 {
		tb.DumpLogs(os.Stderr, 40)
	}

	// Acceptance: once stopped, nothing the testbed started is alive and no
	// port it used is still bound.
	var pids []int
	var ports []int
	for _, c := range tb.Clusters {
		for _, pid := range c.PIDs() {
			pids = append(pids, pid)
		}
		ports = append(ports, c.Ports()...)
	}
	dir := tb.Dir
	tb.Stop()
	if err := checkNothingLeft(pids, ports, dir); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: after Stop:", err)
		return 1
	}
	return code
}

// checkNothingLeft verifies that the processes are gone, the ports are free
// and the directory is removed.
func checkNothingLeft(pids, ports []int, dir string) error {
	if len(pids) == 0 {
		return fmt.Errorf("no process was recorded, so nothing could be checked")
	}
	for _, pid := range pids {
		if proc.Alive(pid) {
			return fmt.Errorf("process %d is still alive", pid)
		}
	}
	for _, port := range ports {
		if portBound(port) {
			return fmt.Errorf("port %d is still bound", port)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		return fmt.Errorf("directory %s still exists (%v)", dir, err)
	}
	return nil
}
