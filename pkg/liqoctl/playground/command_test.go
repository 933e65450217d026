package playground_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/liqo-go/liqo/pkg/liqoctl"
)

// TestRunsLiqoPlayground: liqoctl playground hands every argument, flags
// and --help included, to the liqo-playground found on PATH, and exits
// with its code.
func TestRunsLiqoPlayground(t *testing.T) {
	dir := t.TempDir()
	script := "#!/bin/sh\necho \"args: $*\"\necho oops >&2\nexit 3\n"
	if err := os.WriteFile(filepath.Join(dir, "liqo-playground"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	var out, errOut bytes.Buffer
	code := liqoctl.Run(context.Background(), []string{"playground", "--dir", "/tmp/x", "up", "--clusters", "rome", "--help"}, &out, &errOut)
	if code != 3 {
		t.Errorf("exit %d, want liqo-playground's 3", code)
	}
	if got := strings.TrimSpace(out.String()); got != "args: --dir /tmp/x up --clusters rome --help" {
		t.Errorf("liqo-playground got %q", got)
	}
	if got := strings.TrimSpace(errOut.String()); got != "oops" {
		t.Errorf("stderr %q, want liqo-playground's alone", got)
	}
}

// TestMissingLiqoPlayground: without liqo-playground next to liqoctl or
// on PATH, the error says where it looked and how to build it.
func TestMissingLiqoPlayground(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var out, errOut bytes.Buffer
	code := liqoctl.Run(context.Background(), []string{"playground", "up"}, &out, &errOut)
	if code != liqoctl.ExitFailure || !strings.Contains(errOut.String(), "neither next to liqoctl") ||
		!strings.Contains(errOut.String(), "nor on PATH") || !strings.Contains(errOut.String(), "make liqoctl") {
		t.Errorf("exit %d, stderr %q: want a failure saying where liqo-playground was looked for and how to build it", code, errOut.String())
	}
}
