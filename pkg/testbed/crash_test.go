package testbed

import (
	"github.com/liqo-go/liqo/test/harness"

	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/liqo-go/liqo/pkg/proc"
	"github.com/liqo-go/liqo/pkg/testbed/netns"
)

// crashHelperEnv runs the test binary as the owner of one cluster: "kwok"
// (simulated nodes) or "real" (one real node).
const crashHelperEnv = "LIQO_TESTBED_CRASH_HELPER"

// runCrashHelper is the body of the child process of the crash tests: it
// starts a cluster, reports what it started and waits to be killed.
func runCrashHelper(kind string) {
	spec := ClusterSpec{Name: "crash", Nodes: []NodePool{{Count: 1}}}
	if kind == "real" {
		spec = ClusterSpec{Name: "crash", RealNodes: 1, Nodes: []NodePool{{Count: 0}}}
	}
	tb, err := Start(context.Background(), Options{}, spec)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	_ = json.NewEncoder(os.Stdout).Encode(tb.footprint())
	select {}
}

// crash starts a helper owning a cluster of the given kind, kills it with
// SIGKILL, so that no cleanup code runs, and waits until the processes it
// started directly are dead.
func crash(t *testing.T, kind string) footprint {
	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), crashHelperEnv+"="+kind)
	helper.Stderr = os.Stderr
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	var r footprint
	if err := json.NewDecoder(bufio.NewReader(out)).Decode(&r); err != nil {
		_ = helper.Process.Kill()
		_ = helper.Wait()
		t.Fatalf("reading the helper's report: %v", err)
	}
	_ = helper.Process.Kill()
	_ = helper.Wait()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	harness.Eventually(ctx, t, "the crashed owner's processes to die and ports to be freed", func() (bool, error) {
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
	return r
}

// TestCrashLeavesNothing checks that the control plane of a killed owner
// dies with it and that the next testbed sweeps its directory.
func TestCrashLeavesNothing(t *testing.T) {
	r := crash(t, "kwok")
	if len(r.PIDs) != 5 {
		t.Errorf("the helper reported %d running components, want 5", len(r.PIDs))
	}
	sweepStale(os.TempDir())
	if err := r.check(); err != nil {
		t.Error(err)
	}
}

// TestCrashWithRealNodesLeavesNothing kills the owner of a cluster with a
// real node running CoreDNS. The container shims and containers outlive it,
// with the node's network namespace, cgroups and mounts; the next start's
// sweep removes them all.
func TestCrashWithRealNodesLeavesNothing(t *testing.T) {
	if err := RealNodesSupported(); err != nil {
		t.Fatal(err)
	}
	r := crash(t, "real")
	if len(r.NodeNS) != 1 || len(netns.List(r.NodeNS[0])) != 1 {
		t.Fatalf("after the crash, the node's network namespace should be left for the sweep; found %v", r.NodeNS)
	}
	if n := len(cgroupPIDs(r.Cgroups[0])); n == 0 {
		t.Errorf("after the crash, the shims and containers should outlive their owner until the sweep; none found in %s", r.Cgroups[0])
	}
	if err := SweepHost(); err != nil {
		t.Fatal(err)
	}
	sweepStale(os.TempDir())
	if err := r.check(); err != nil {
		t.Error(err)
	}
}
