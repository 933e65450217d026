// Package chart embeds the liqo Helm chart, so that liqoctl installs the
// chart of its own version without fetching anything.
package chart

import (
	"embed"
	"fmt"
	"io/fs"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
)

// The chart's files; .helmignore keeps the Go files out of it.
//
//go:embed Chart.yaml values.yaml values.schema.json .helmignore all:templates crds/*.yaml files/*.yaml files/rbac/*.yaml
var files embed.FS

// Load returns the embedded chart, its version and appVersion set to
// version (the components' image tag) unless it is empty.
func Load(version string) (*chart.Chart, error) {
	var bufs []*loader.BufferedFile
	err := fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := files.ReadFile(path)
		if err != nil {
			return err
		}
		bufs = append(bufs, &loader.BufferedFile{Name: path, Data: data})
		return nil
	})
	if err != nil {
		return nil, err
	}
	c, err := loader.LoadFiles(bufs)
	if err != nil {
		return nil, fmt.Errorf("loading the embedded chart: %w", err)
	}
	setVersion(c, version)
	return c, nil
}

// LoadDir returns the chart in the directory (or .tgz archive) path, as
// Load returns the embedded one: a development chart (liqoctl install
// --local-chart-path, --repo-url).
func LoadDir(path, version string) (*chart.Chart, error) {
	c, err := loader.Load(path)
	if err != nil {
		return nil, fmt.Errorf("loading the chart at %s: %w", path, err)
	}
	setVersion(c, version)
	return c, nil
}

// setVersion sets the chart's appVersion to version (the components' image
// tag), and its version too when version is SemVer.
func setVersion(c *chart.Chart, version string) {
	if version == "" {
		return
	}
	// A chart version is SemVer: "v1.2.3" is accepted by Helm, "dev" is not.
	c.Metadata.AppVersion = version
	if v := strings.TrimPrefix(version, "v"); isSemVer(v) {
		c.Metadata.Version = v
	}
}

// isSemVer tells whether v looks like MAJOR.MINOR.PATCH[-pre][+build].
func isSemVer(v string) bool {
	core, _, _ := strings.Cut(v, "+")
	core, _, _ = strings.Cut(core, "-")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	return true
}
