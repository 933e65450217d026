package testbed

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/liqo-go/liqo/pkg/proc"
)

const crashHelperEnv = "LIQO_TESTBED_CRASH_HELPER"

type helperReport struct {
	PIDs  []int  `json:"pids"`
	Ports []int  `json:"ports"`
	Dir   string `json:"dir"`
}

// runCrashHelper is the body of the child process of TestCrashLeavesNothing:
// it starts a cluster, reports what it started and waits to be killed.
func runCrashHelper() {
	tb, err := Start(context.Background(), Options{}, ClusterSpec{Name: "crash", Nodes: []NodePool{{Count: 1}}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	r := helperReport{Ports: tb.Clusters[0].Ports(), Dir: tb.Dir}
	for _, pid := range tb.Clusters[0].PIDs() {
		r.PIDs = append(r.PIDs, pid)
	}
	_ = json.NewEncoder(os.Stdout).Encode(r)
	select {}
}

// TestCrashLeavesNothing kills a process that owns a running cluster with
// SIGKILL, so no cleanup code runs, and checks that its control plane dies
// with it and that the next testbed sweeps its directory.
func TestCrashLeavesNothing(t *testing.T) {
	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), crashHelperEnv+"=1")
	helper.Stderr = os.Stderr
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	var r helperReport
	if err := json.NewDecoder(bufio.NewReader(out)).Decode(&r); err != nil {
		_ = helper.Process.Kill()
		_ = helper.Wait()
		t.Fatalf("reading the helper's report: %v", err)
	}
	if len(r.PIDs) != 5 {
		t.Errorf("the helper reported %d running components, want 5", len(r.PIDs))
	}
	_ = helper.Process.Kill()
	_ = helper.Wait()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	Eventually(ctx, t, "the crashed owner's processes to die and ports to be freed", func() (bool, error) {
		for _, pid := range r.PIDs {
			if proc.Alive(pid) {
				return false, nil
			}
		}
		for _, port := range r.Ports {
			if portBound(port) {
				return false, nil
			}
		}
		return true, nil
	})

	sweepStale(os.TempDir())
	if err := checkNothingLeft(r.PIDs, r.Ports, r.Dir); err != nil {
		t.Error(err)
	}
}
