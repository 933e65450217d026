package main

import (
	"fmt"
	"strings"

	"helm.sh/helm/v3/pkg/chartutil"

	chart "github.com/liqo-go/liqo/deploy/charts/liqo"
)

// checkVersion refuses a version the chart cannot carry: a chart's version
// is SemVer, and the release names its chart, images and liqoctl alike.
func checkVersion(version string) error {
	if version == "" {
		return fmt.Errorf("--version is required (v1.2.3)")
	}
	c, err := chart.Load(version)
	if err != nil {
		return err
	}
	if !strings.HasPrefix(version, "v") || c.Metadata.Version != strings.TrimPrefix(version, "v") {
		return fmt.Errorf("--version %q is not SemVer with a leading v (v1.2.3, v1.2.3-rc.1)", version)
	}
	return nil
}

// packageChart writes the chart liqoctl embeds, its version and appVersion
// (the images' tag) set to version, as liqo-<version>.tgz into dir, as
// `helm package` does, and returns the file's path.
func packageChart(dir, version string) (string, error) {
	c, err := chart.Load(version)
	if err != nil {
		return "", err
	}
	path, err := chartutil.Save(c, dir)
	if err != nil {
		return "", fmt.Errorf("packaging the chart: %w", err)
	}
	return path, nil
}
