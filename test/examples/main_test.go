// Package examples runs the examples under examples/ (the v0.5 manual's
// tutorials adapted to the playground) as a user would: each example's
// run.sh and teardown.sh, unchanged, with bash, kubectl and liqoctl
// binaries, against testbed clusters set up as the playground sets its own
// up: rome (consumer) peered with milan (provider) with the network
// fabric, real nodes for the pods that must really run, and naples, a
// third cluster, for the example that peers with it.
package examples

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/liqo-go/liqo/pkg/controllermanager"
	"github.com/liqo-go/liqo/pkg/images/catalog"
	"github.com/liqo-go/liqo/pkg/liqoctl"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/pkg/testbed/fabricopts"
	"github.com/liqo-go/liqo/test/inprocess"
)

var (
	rome, milan, naples *testbed.Cluster
	kubeconfigs         = map[string]string{}
	// binDir holds liqoctl and kubectl, first on the scripts' PATH, as
	// the playground's bin/ and the checkout's bin/ are for a user.
	binDir string
)

func TestMain(m *testing.M) {
	if err := testbed.RealNodesSupported(); err != nil {
		_, _ = os.Stderr.WriteString("the examples need real nodes (root): " + err.Error() + "\n")
		os.Exit(1)
	}
	testbed.Main(m, func(tb *testbed.Testbed) {
		rome, milan, naples = tb.Cluster("rome"), tb.Cluster("milan"), tb.Cluster("naples")
		dir, err := tb.LogDir("liqo-examples-")
		testbed.Must(tb, err)
		binDir = filepath.Join(dir, "bin")
		testbed.Must(tb, os.MkdirAll(binDir, 0o755))
		build := make(chan error, 1)
		go func() { build <- buildLiqoctl(binDir) }()
		testbed.Must(tb, os.Symlink(rome.KubectlPath(), filepath.Join(binDir, "kubectl")))
		ctx := context.Background()
		// rome and milan as the playground's: the network fabric on, the
		// storage fabric's mover image published.
		for _, c := range []*testbed.Cluster{rome, milan} {
			m, err := inprocess.Start(ctx, c, dir, withFabric(c))
			testbed.Must(tb, err)
			kubeconfigs[c.Name] = m.Kubeconfig
		}
		// naples has simulated nodes only: the example that peers with it
		// does so without the network fabric, which it does not need.
		m, err := inprocess.Start(ctx, naples, dir, nil)
		testbed.Must(tb, err)
		kubeconfigs[naples.Name] = m.Kubeconfig
		testbed.Must(tb, <-build)
		// What `liqoctl playground up` does once the clusters are ready.
		if out, err := liqoctl.Execute(ctx, "peer", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs["milan"],
			"--server-service-type", "NodePort", "--timeout", "5m"); err != nil {
			testbed.Must(tb, fmt.Errorf("peering rome with milan: %w\n%s", err, out))
		}
	},
		testbed.ClusterSpec{Name: "rome", RealNodes: 1, Nodes: []testbed.NodePool{{Count: 0}}},
		testbed.ClusterSpec{Name: "milan", RealNodes: 1, Nodes: []testbed.NodePool{{Count: 0}}},
		testbed.ClusterSpec{Name: "naples", Nodes: []testbed.NodePool{{Prefix: "worker", Count: 1, CPU: "8", Memory: "32Gi", Pods: 110}}},
	)
}

func withFabric(c *testbed.Cluster) func(*controllermanager.Options) error {
	return func(o *controllermanager.Options) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // a cold build compiles the images
		defer cancel()
		if err := c.PushComponents(ctx, catalog.Mover); err != nil {
			return err
		}
		return fabricopts.Enable(ctx, c, o)
	}
}

func buildLiqoctl(dir string) error {
	out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "liqoctl"), "github.com/liqo-go/liqo/cmd/liqoctl").CombinedOutput()
	if err != nil {
		return fmt.Errorf("building liqoctl: %w\n%s", err, out)
	}
	return nil
}

// script runs examples/<example>/<name> with bash, as its README says: the
// kubeconfigs in KUBECONFIG (rome), KUBECONFIG_MILAN and KUBECONFIG_NAPLES,
// kubectl and liqoctl on PATH. It fails the test when the script fails
// and returns its output (stdout and stderr interleaved).
func script(ctx context.Context, t *testing.T, example, name string) string {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("..", "..", "examples", example, name))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cmd := exec.CommandContext(ctx, "bash", path)
	cmd.Dir = t.TempDir() // the script finds its manifests itself
	cmd.Env = append(os.Environ(),
		"PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"KUBECONFIG="+kubeconfigs["rome"],
		"KUBECONFIG_MILAN="+kubeconfigs["milan"],
		"KUBECONFIG_NAPLES="+kubeconfigs["naples"],
	)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	t.Logf("%s/%s took %s", example, name, time.Since(start).Round(100*time.Millisecond))
	if err != nil {
		t.Fatalf("%s/%s: %v\n%s", example, name, err, out.String())
	}
	return out.String()
}

// contains fails the test for each wanted string the output lacks.
func contains(t *testing.T, what, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s: the output lacks %q:\n%s", what, w, out)
		}
	}
}
