package install

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/chart"

	chartfs "github.com/liqo-go/liqo/deploy/charts/liqo"
	"github.com/liqo-go/liqo/deploy/charts/liqo/crds"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
)

// chartDirs are where a clone of the repository (--repo-url) holds the
// chart: this project's layout, then the reference's.
var chartDirs = []string{"deploy/charts/liqo", "deployments/liqo"}

// loadChart is the chart to install: the one at --local-chart-path, the one
// of a clone of --repo-url at --version, or the one embedded in liqoctl.
// cleanup removes the clone, if any.
func (o *options) loadChart(ctx context.Context, p *output.Printer) (c *chart.Chart, cleanup func(), err error) {
	cleanup = func() {}
	switch {
	case o.localChartPath != "":
		p.Step("Loading the chart at %s (--local-chart-path)", o.localChartPath)
		c, err = chartfs.LoadDir(o.localChartPath, o.version)
		return c, cleanup, err
	case o.repoURL != "":
		dir, err := os.MkdirTemp("", "liqoctl-chart-")
		if err != nil {
			return nil, cleanup, err
		}
		cleanup = func() { _ = os.RemoveAll(dir) }
		p.Step("Cloning %s at %s (--repo-url, --version)", o.repoURL, o.version)
		if err := clone(ctx, o.repoURL, o.version, dir); err != nil {
			return nil, cleanup, err
		}
		for _, sub := range chartDirs {
			path := filepath.Join(dir, sub)
			if _, err := os.Stat(filepath.Join(path, "Chart.yaml")); err == nil {
				c, err = chartfs.LoadDir(path, o.version)
				return c, cleanup, err
			}
		}
		return nil, cleanup, fmt.Errorf("%s at %s has no chart (looked in %s)", o.repoURL, o.version, strings.Join(chartDirs, ", "))
	}
	c, err = chartfs.Load(o.version)
	return c, cleanup, err
}

// clone checks out revision of the git repository url into dir, with the
// git command.
func clone(ctx context.Context, url, revision, dir string) error {
	if _, err := exec.LookPath("git"); err != nil {
		return errors.New("--repo-url needs the git command, which is not in $PATH: clone the repository yourself and pass --local-chart-path")
	}
	for _, args := range [][]string{
		{"clone", "--quiet", "--no-checkout", url, dir},
		{"-C", dir, "checkout", "--quiet", revision},
	} {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// chartCRDs are the CRDs of a chart that is not the embedded one, which
// liqoctl applies before installing it (Helm never updates CRDs); nil for
// the embedded chart, whose CRDs crds.Install applies.
func (o *options) chartCRDs(c *chart.Chart) ([]*crds.CRD, error) {
	if o.localChartPath == "" && o.repoURL == "" {
		return nil, nil
	}
	var out []*crds.CRD
	for _, f := range c.CRDObjects() {
		crd, err := crds.Decode(f.Filename, f.File.Data)
		if err != nil {
			return nil, err
		}
		out = append(out, crd)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the chart %s has no CRDs in its crds directory", c.Name())
	}
	return out, nil
}
