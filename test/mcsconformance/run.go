package mcsconformance

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Options are one run of the suite.
type Options struct {
	// Kubeconfig holds a context for each cluster of Contexts.
	Kubeconfig string
	// Contexts are the clusters, the exporting one first.
	Contexts []string
	// ReportDir receives the suite's report.yaml and report.html and its
	// output (suite.log): the run's artifacts.
	ReportDir string
	// Timeout bounds the whole run (the suite's own -test.timeout).
	Timeout time.Duration
}

// Report is the suite's report.yaml: every Required and Optional test with
// its outcome.
type Report struct {
	Groups       []Group `json:"groups"`
	SuiteFailure string  `json:"suitefailure"`
	DNSDomain    string  `json:"dnsdomain"`
	Passed       int     `json:"passed"`
	Total        int     `json:"total"`
}

// Group is the tests of one label (Required, Optional).
type Group struct {
	Name  string `json:"name"`
	Tests []Test `json:"tests"`
}

// Test is one test's outcome: Passed only if it ran, did not fail and
// found the implementation conformant.
type Test struct {
	Desc       string   `json:"desc"`
	Labels     []string `json:"labels"`
	Passed     bool     `json:"passed"`
	Failed     bool     `json:"failed"`
	Skipped    bool     `json:"skipped"`
	Conformant bool     `json:"conformant"`
	Message    string   `json:"message"`
}

// NotPassedTests are the tests that did not pass.
func (r *Report) NotPassedTests() []Test {
	var out []Test
	for _, g := range r.Groups {
		for _, t := range g.Tests {
			if !t.Passed {
				out = append(out, t)
			}
		}
	}
	return out
}

// Run runs the compiled suite bin with o, in o.ReportDir, and reads its
// report. The suite's output is written to suite.log there and to log. A
// suite that fails still writes its report: the error is returned with
// the report when there is one.
func Run(ctx context.Context, bin string, o Options, log io.Writer) (*Report, error) {
	if err := os.MkdirAll(o.ReportDir, 0o755); err != nil {
		return nil, err
	}
	out, err := os.Create(filepath.Join(o.ReportDir, "suite.log"))
	if err != nil {
		return nil, err
	}
	defer out.Close()
	args := []string{
		"-test.v", "-test.timeout", o.Timeout.String(),
		"-kubeconfig", o.Kubeconfig, "-contexts", strings.Join(o.Contexts, ","),
		"-project", "liqo-go",
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = o.ReportDir // report.yaml and report.html land in the working directory
	cmd.Stdout = io.MultiWriter(out, log)
	cmd.Stderr = cmd.Stdout
	runErr := cmd.Run()
	report, readErr := ReadReport(filepath.Join(o.ReportDir, "report.yaml"))
	if readErr != nil {
		if runErr != nil {
			return nil, fmt.Errorf("the suite failed (%w) and wrote no report: %w", runErr, readErr)
		}
		return nil, readErr
	}
	if runErr != nil {
		return report, fmt.Errorf("the suite failed: %w (see %s)", runErr, out.Name())
	}
	return report, nil
}

// ReadReport reads a report.yaml the suite wrote.
func ReadReport(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the suite's report: %w", err)
	}
	var r Report
	if err := yaml.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	// The suite's descriptions start with a space (the Describe's and the
	// Specify's texts joined).
	for _, g := range r.Groups {
		for i := range g.Tests {
			g.Tests[i].Desc = strings.TrimSpace(g.Tests[i].Desc)
		}
	}
	return &r, nil
}
