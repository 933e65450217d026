// Command release writes what a release of liqo-go publishes beside its
// images (make release runs hack/images for those): liqoctl for every
// platform as an archive (tar.gz, zip for Windows), the Helm chart
// packaged as a .tgz that plain `helm install` takes, the krew plugin
// manifest pointing at the archives, and SHA256SUMS of them all.
//
//	go run ./hack/release --version v1.2.3 --output dist \
//	    --url https://github.com/liqo-go/liqo/releases/download/v1.2.3
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/liqo-go/liqo/pkg/liqoctl"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, pflag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	version   string
	output    string
	url       string
	platforms []string
}

func parse(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := pflag.NewFlagSet("release", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.version, "version", "", "the release's version, SemVer with a leading v (v1.2.3): liqoctl's, the chart's and the images' tag")
	fs.StringVar(&o.output, "output", "dist", "directory the release is written into (created if absent)")
	fs.StringVar(&o.url, "url", "", "URL the archives are published under, which the krew manifest points at (default: the GitHub release of --version)")
	fs.StringSliceVar(&o.platforms, "platforms", liqoctl.ReleasePlatforms(), "GOOS/GOARCH of the liqoctl archives")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.url == "" {
		o.url = "https://github.com/liqo-go/liqo/releases/download/" + o.version
	}
	return o, nil
}

// run writes the release args ask for, printing each file it writes.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stderr)
	if err != nil {
		return err
	}
	// Every input is checked before minutes of builds can fail on it.
	if err := checkVersion(o.version); err != nil {
		return err
	}
	var platforms []platform
	for _, s := range o.platforms {
		p, err := parsePlatform(s)
		if err != nil {
			return fmt.Errorf("--platforms: %w", err)
		}
		platforms = append(platforms, p)
	}
	if err := os.MkdirAll(o.output, 0o755); err != nil {
		return err
	}

	archives, err := buildArchives(ctx, o.output, o.version, platforms, stdout)
	if err != nil {
		return err
	}
	chartFile, err := packageChart(o.output, o.version)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "wrote", chartFile)
	manifest, err := writeKrewManifest(o.output, o.version, o.url, archives)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "wrote", manifest)
	sums, err := writeSums(o.output)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "wrote", sums)
	return nil
}
