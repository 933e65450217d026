package crds_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestGeneratedUpToDate regenerates the CRDs with the controller-gen pinned
// in the Makefile and compares them with the committed ones, so that a type
// edited without `make generate` (or a doc-comment reformat that changes a
// validation rule) fails here rather than in a cluster.
func TestGeneratedUpToDate(t *testing.T) {
	makefile, err := os.ReadFile("../../../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`CONTROLLER_GEN\s*:=\s*(\S+)`).FindSubmatch(makefile)
	if m == nil {
		t.Fatal("no CONTROLLER_GEN pin in the Makefile")
	}
	out := t.TempDir()
	cmd := exec.Command("go", "run", string(m[1]), "crd", "paths=./apis/...", "output:crd:artifacts:config="+out)
	cmd.Dir = "../../../.."
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("controller-gen: %v\n%s", err, msg)
	}
	fresh, _ := filepath.Glob(filepath.Join(out, "*.yaml"))
	committed, _ := filepath.Glob("*.yaml")
	// The Multi-Cluster Services API's CRDs come from its module, not from
	// our types: the chart's generator checks them (gen.TestUpToDate).
	committed = slices.DeleteFunc(committed, func(f string) bool { return strings.HasPrefix(f, "multicluster.x-k8s.io_") })
	if len(fresh) != len(committed) {
		t.Fatalf("controller-gen makes %d CRDs, %d are committed: run make generate", len(fresh), len(committed))
	}
	for _, f := range fresh {
		want, _ := os.ReadFile(f)
		got, err := os.ReadFile(filepath.Base(f))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is stale (%v): run make generate", filepath.Base(f), err)
		}
	}
}
