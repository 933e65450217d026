// Package mcsconformance builds and runs the upstream Multi-Cluster Services
// conformance suite (the conformance folder of sigs.k8s.io/mcs-api) against
// clusters of ours, unmodified. The suite is a peer's code, not ours: it is
// read from outside the repository (../shared/mcs-conformance beside the
// checkout, or $MCS_CONFORMANCE_DIR) and built in a temporary copy whose
// go.mod names a released sigs.k8s.io/mcs-api instead of the parent
// directory it expects.
package mcsconformance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// MCSAPIVersion is the released sigs.k8s.io/mcs-api the suite is built
// with: the one go.mod requires, whose CRDs the chart installs.
const MCSAPIVersion = "v0.5.2"

// EnvDir names the suite's directory when it is not beside the checkout.
const EnvDir = "MCS_CONFORMANCE_DIR"

// SuiteDir is where the suite's sources are: $MCS_CONFORMANCE_DIR, or
// ../shared/mcs-conformance next to the repository's root.
func SuiteDir() (string, error) {
	if dir := os.Getenv(EnvDir); dir != "" {
		return checkSuite(dir)
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	return checkSuite(filepath.Join(root, "..", "shared", "mcs-conformance"))
}

func checkSuite(dir string) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, "conformance_suite.go")); err != nil {
		return "", fmt.Errorf("the MCS conformance suite is not at %s (set %s to its directory): %w", dir, EnvDir, err)
	}
	return filepath.Abs(dir)
}

// repoRoot is the directory of this repository's go.mod, found from this
// source file's path (tests run in their package's directory, anywhere
// in the tree).
func repoRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("cannot locate the repository: no caller information")
	}
	dir := filepath.Dir(file)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above %s", file)
		}
		dir = parent
	}
}

// Build copies the suite in suiteDir to a new directory under workDir,
// points its module at the released mcs-api, and compiles it into a test
// binary, whose path it returns. The go command's output goes to log.
func Build(ctx context.Context, suiteDir, workDir string, log io.Writer) (string, error) {
	src := filepath.Join(workDir, "suite")
	if err := os.CopyFS(src, os.DirFS(suiteDir)); err != nil {
		return "", fmt.Errorf("copying the suite: %w", err)
	}
	bin := filepath.Join(workDir, "conformance.test")
	steps := [][]string{
		// The suite replaces mcs-api by its parent directory, which is
		// not here: the released module instead.
		{"mod", "edit", "-dropreplace=sigs.k8s.io/mcs-api", "-require=sigs.k8s.io/mcs-api@" + MCSAPIVersion},
		{"mod", "tidy"},
		{"test", "-c", "-o", bin, "."},
	}
	for _, args := range steps {
		if err := goCmd(ctx, src, log, args...); err != nil {
			return "", err
		}
	}
	return bin, nil
}

// goCmd runs the go command on PATH (the one running the tests) in dir, as
// its own module (no workspace, modules from the proxy).
func goCmd(ctx context.Context, dir string, log io.Writer, args ...string) error {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s in the suite's copy: %w", strings.Join(args, " "), err)
	}
	return nil
}

// EnvReports names where the runs' reports are kept, when not in the
// repository's _output/mcs-conformance.
const EnvReports = "MCS_CONFORMANCE_REPORTS"

// ReportDir is where the run called name keeps its report: a directory of
// $MCS_CONFORMANCE_REPORTS, or of _output/mcs-conformance in the
// repository (ignored by git), emptied first so that an old report is
// never read as this run's.
func ReportDir(name string) (string, error) {
	base := os.Getenv(EnvReports)
	if base == "" {
		root, err := repoRoot()
		if err != nil {
			return "", err
		}
		base = filepath.Join(root, "_output", "mcs-conformance")
	}
	dir := filepath.Join(base, name)
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	return dir, os.MkdirAll(dir, 0o755)
}
