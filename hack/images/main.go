// Command images builds the images of Liqo's server components without
// Docker: for each component (see catalog.All) it cross-compiles a
// static binary per platform, puts each alone in an image on an empty base
// with a CA bundle, joins the images in a multi-platform index, writes the
// index into an OCI layout directory and, with --registry, pushes it to a
// plain-HTTP registry under its mirrored name.
//
// The same sources, Go toolchain, tag and CA bundle give the same digests.
//
//	go run ./hack/images --registry 127.0.0.1:5000 --tag v0.1.0
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/spf13/pflag"

	"github.com/liqo-go/liqo/pkg/images"
	"github.com/liqo-go/liqo/pkg/images/catalog"
)

// debianCABundle is where Debian's ca-certificates writes the trusted
// roots, the file Go's crypto/x509 reads first on Linux.
const debianCABundle = "/etc/ssl/certs/ca-certificates.crt"

// builder builds one component's index: images.BuildComponent, or a stand-in
// in tests.
type builder func(context.Context, catalog.Component, images.BuildOptions) (v1.ImageIndex, error)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr, images.BuildComponent)
	stop()
	if errors.Is(err, pflag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	output     string
	registry   string
	tag        string
	platforms  []string
	components []string
	caBundle   string
}

func parse(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := pflag.NewFlagSet("images", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	var names []string
	for _, c := range catalog.All() {
		names = append(names, c.Name)
	}
	fs.StringVar(&o.output, "output", "_output/images", "OCI layout directory the indexes are written into (created if absent, added to if present)")
	fs.StringVar(&o.registry, "registry", "", "host:port of a plain-HTTP registry to push the indexes to, under their names without the registry host (none: no push)")
	fs.StringVar(&o.tag, "tag", "dev", "tag of the images, and the version of the commands that have a version variable")
	fs.StringSliceVar(&o.platforms, "platforms", []string{"linux/amd64", "linux/arm64"}, "platforms of each index")
	fs.StringSliceVar(&o.components, "components", names, "components to build")
	// The controller manager dials the API servers of other clusters. A
	// kubeconfig usually carries its cluster's CA, but one that does not
	// (an API server with a publicly trusted certificate) leaves Go to
	// verify against the system's roots, which an empty image lacks: every
	// such TLS handshake would fail with "certificate signed by unknown
	// authority".
	fs.StringVar(&o.caBundle, "ca-bundle", debianCABundle, `PEM file put into the images as their trusted CAs ("" for none; the default is skipped, with a warning, where missing)`)
	fs.Usage = func() {
		fmt.Fprintf(stderr, `Usage: go run ./hack/images [flags]

Builds the image of each server component (%s): a static Go
binary per platform on an empty base, with a CA bundle, all platforms in one
index. The same sources, Go toolchain, tag and CA bundle give the same digest.
Each index is written into the OCI layout --output as
%s/<component>:<tag>, and with --registry pushed to
<registry>/%s/<component>:<tag> (plain HTTP).

Flags:
%s`, strings.Join(names, ", "), catalog.Repository, repositoryPath(), fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return o, nil
}

// repositoryPath is catalog.Repository without its host ("liqo-go"), the
// path the images are pushed under.
func repositoryPath() string {
	r, err := name.NewRepository(catalog.Repository)
	if err != nil {
		return catalog.Repository
	}
	return r.RepositoryStr()
}

// run builds, writes and pushes what args ask, printing progress to stdout
// and warnings to stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, build builder) error {
	o, err := parse(args, stderr)
	if err != nil {
		return err
	}
	// Every input is checked before a build of minutes can fail on it.
	if _, err := name.NewTag(catalog.Repository+"/x:"+o.tag, name.StrictValidation); err != nil {
		return fmt.Errorf("--tag %q: %w", o.tag, err)
	}
	if o.registry != "" {
		if _, err := images.MirrorRef(o.registry, catalog.Repository+"/x:"+o.tag); err != nil {
			return fmt.Errorf("--registry %q: %w", o.registry, err)
		}
	}
	var platforms []v1.Platform
	for _, s := range o.platforms {
		if s == "" {
			// ParsePlatform would read it as this machine's platform.
			return fmt.Errorf("--platforms %q: an empty platform", strings.Join(o.platforms, ","))
		}
		p, err := v1.ParsePlatform(s)
		if err != nil {
			return fmt.Errorf("--platforms %q: %w", s, err)
		}
		platforms = append(platforms, *p)
	}
	var components []catalog.Component
	for _, n := range o.components {
		c, err := catalog.Lookup(n)
		if err != nil {
			return fmt.Errorf("--components: %w", err)
		}
		components = append(components, c)
	}
	bundle, err := caBundle(o.caBundle, stderr)
	if err != nil {
		return err
	}

	for _, c := range components {
		start := time.Now()
		idx, err := build(ctx, c, images.BuildOptions{Platforms: platforms, Version: o.tag, CABundle: bundle, Progress: stdout})
		if err != nil {
			return err
		}
		d, err := idx.Digest()
		if err != nil {
			return err
		}
		ref := c.Ref(o.tag)
		if err := images.WriteLayout(o.output, ref, idx); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: wrote %s into %s\n", c.Name, ref, o.output)
		if o.registry != "" {
			mirrored, err := images.MirrorRef(o.registry, ref)
			if err != nil {
				return err
			}
			if err := images.Push(ctx, o.registry, ref, idx); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%s: pushed %s\n", c.Name, mirrored.Name())
		}
		fmt.Fprintf(stdout, "%s: index %s (%s)\n", c.Name, d, time.Since(start).Round(100*time.Millisecond))
	}
	return nil
}

// caBundle is the CA bundle to build with: path, or none when path is the
// default and this machine has no such file (not Debian, or no
// ca-certificates), which is worth a warning since the images then differ.
func caBundle(path string, stderr io.Writer) (string, error) {
	if path == "" {
		return "", nil
	}
	_, err := os.Stat(path)
	switch {
	case err == nil:
		return path, nil
	case path == debianCABundle && errors.Is(err, os.ErrNotExist):
		fmt.Fprintf(stderr, "images: warning: no %s (install ca-certificates): the images have no CA bundle\n", path)
		return "", nil
	default:
		return "", fmt.Errorf("--ca-bundle: %w", err)
	}
}
