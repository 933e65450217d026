package peering

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKubectlPlugin runs liqoctl through kubectl's plugin mechanism: the
// binary installed as kubectl-liqo in $PATH is "kubectl liqo", and linked
// as kubectl_complete-liqo it completes "kubectl liqo <Tab>".
func TestKubectlPlugin(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("no kubectl in $PATH")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin := t.TempDir()
	build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(bin, "kubectl-liqo"), "github.com/liqo-go/liqo/cmd/liqoctl")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	if err := os.Symlink("kubectl-liqo", filepath.Join(bin, "kubectl_complete-liqo")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(filepath.ListSeparator)+os.Getenv("PATH"))
	kubectlRun := func(args ...string) string {
		t.Helper()
		out, err := exec.CommandContext(ctx, kubectl, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	if out := kubectlRun("liqo", "info", "--kubeconfig", kubeconfigs["rome"], "--get", "local.clusterID"); strings.TrimSpace(out) != "rome" {
		t.Errorf("kubectl liqo info --get local.clusterID printed %q", out)
	}
	if out := kubectlRun("liqo", "info", "--help"); !strings.Contains(out, "\n  kubectl liqo info [flags]") {
		t.Errorf("kubectl liqo info --help does not say kubectl liqo:\n%s", out)
	}
	if out := kubectlRun("__complete", "liqo", "pe"); !strings.Contains(out, "peer\t") {
		t.Errorf("kubectl liqo pe<Tab> does not complete peer:\n%s", out)
	}
}
