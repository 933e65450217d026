package testbed

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

// shared is the two-cluster testbed every test of this package uses: starting
// control planes is the expensive part, so it happens once.
var shared *Testbed

func TestMain(m *testing.M) {
	if kind := os.Getenv(crashHelperEnv); kind != "" {
		runCrashHelper(kind)
		return
	}
	if dir := os.Getenv(hostPackagesHelperEnv); dir != "" {
		runHostPackagesHelper(dir)
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
	check := tb.Leftovers()
	tb.Stop()
	if err := check(); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: after Stop:", err)
		return 1
	}
	return code
}
