package networking

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/mcsconformance"
	"github.com/liqo-go/liqo/test/realpods"
)

// TestMCSConformance runs the upstream Multi-Cluster Services conformance
// suite, unmodified, on clusters whose pod CIDRs are the same: rome
// exports, milan imports (and exports in the tests of conflicts), then
// the same with paris as a third cluster. A cluster imports the exports of
// its direct peers only, so the clusterset the suite expects is a full
// mesh: rome consumes milan and paris, and for the three-cluster run milan
// consumes paris too. Every test of the report, Required and Optional,
// must pass; the reports are kept in _output/mcs-conformance (see
// mcsconformance.ReportDir).
func TestMCSConformance(t *testing.T) {
	ctx := realpods.Timeout(t, 75*time.Minute)
	suite, err := mcsconformance.SuiteDir()
	if err != nil {
		t.Fatal(err)
	}
	// The other tests know rome as milan's consumer only: the other
	// peerings end with the test.
	peer(ctx, t, "rome", "milan")
	peer(ctx, t, "rome", "paris")
	t.Cleanup(func() { unpeer(t, "rome", "paris") })
	kubeconfig := clustersetKubeconfig(t, rome, milan, paris)

	work := t.TempDir()
	buildLog := &strings.Builder{}
	bin, err := mcsconformance.Build(ctx, suite, work, buildLog)
	if err != nil {
		t.Fatalf("building the suite: %v\n%s", err, buildLog)
	}
	for _, contexts := range [][]string{{"rome", "milan"}, {"rome", "milan", "paris"}} {
		name := strings.Join(contexts, "-")
		if len(contexts) == 3 {
			peer(ctx, t, "milan", "paris")
			t.Cleanup(func() { unpeer(t, "milan", "paris") })
		}
		t.Run(name, func(t *testing.T) {
			dir, err := mcsconformance.ReportDir(name)
			if err != nil {
				t.Fatal(err)
			}
			report, err := mcsconformance.Run(ctx, bin, mcsconformance.Options{
				Kubeconfig: kubeconfig, Contexts: contexts, ReportDir: dir, Timeout: 30 * time.Minute,
			}, io.Discard)
			if report == nil {
				t.Fatalf("%v", err)
			}
			t.Logf("%s: %d of %d passed (report in %s)", name, report.Passed, report.Total, dir)
			if report.SuiteFailure != "" {
				t.Errorf("suite failure: %s", report.SuiteFailure)
			}
			for _, line := range report.NotPassed() {
				t.Errorf("not passed: %s", line)
			}
			if report.Total == 0 || report.Passed != report.Total {
				t.Errorf("%d of %d passed, want all", report.Passed, report.Total)
			}
			if err != nil {
				t.Errorf("%v", err)
			}
		})
	}
}

// peer makes consumer a consumer of provider, with the network fabric.
func peer(ctx context.Context, t *testing.T, consumer, provider string) {
	t.Helper()
	if out, err := liqoctlRun(ctx, "peer", "--kubeconfig", kubeconfigs[consumer], "--remote-kubeconfig", kubeconfigs[provider],
		"--server-service-type", "NodePort", "--timeout", "5m"); err != nil {
		t.Fatalf("peer %s -> %s: %v\n%s", consumer, provider, err, out)
	}
}

// unpeer ends the peering of consumer with provider and what it offloaded.
func unpeer(t *testing.T, consumer, provider string) {
	t.Helper()
	if out, err := liqoctlRun(context.Background(), "unpeer", "--kubeconfig", kubeconfigs[consumer], "--remote-kubeconfig", kubeconfigs[provider], "--delete-namespaces"); err != nil {
		t.Errorf("unpeer %s -> %s: %v\n%s", consumer, provider, err, out)
	}
}

// clustersetKubeconfig is one kubeconfig with a context named after each
// cluster.
func clustersetKubeconfig(t *testing.T, clusters ...*testbed.Cluster) string {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for _, c := range clusters {
		f := filepath.Join(dir, c.Name+".kubeconfig")
		if err := c.WriteKubeconfig(f); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	out := filepath.Join(dir, "clusterset.kubeconfig")
	if err := mcsconformance.MergeKubeconfigs(out, files...); err != nil {
		t.Fatal(err)
	}
	return out
}
