package images

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/liqo-go/liqo/pkg/images/catalog"
)

// BuildOptions are the inputs of BuildComponent besides the sources.
type BuildOptions struct {
	// Platforms to build for, each linux/<GOARCH> without a variant;
	// DefaultPlatforms if empty.
	Platforms []v1.Platform
	// Version is what the component's VersionVar is set to; ignored when the
	// component has none or Version is empty.
	Version string
	// CABundle is a host PEM file copied into the images at
	// /etc/ssl/certs/ca-certificates.crt; empty leaves it out. Its bytes are
	// an input of the digest like the sources.
	CABundle string
	// Progress receives a line per step; nil discards them.
	Progress io.Writer
}

// DefaultPlatforms are the platforms the server components ship for.
func DefaultPlatforms() []v1.Platform {
	return []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}
}

// BuildComponent cross-compiles c from the sources of the module around the
// current directory into a static binary per platform, builds an image of
// each (Binary, with o.CABundle) and joins them in an index.
//
// The build is reproducible: the same sources, Go toolchain, version and CA
// bundle give the same index digest, whatever the machine or directory. It
// runs "go build" from PATH with cgo disabled, -trimpath, no VCS stamping,
// no build ID and the stripped symbol tables, so that nothing of the build
// machine, the checkout or the time enters the binary. Go's build cache
// makes a second build of unchanged sources take seconds; a cold one
// compiles every dependency for each architecture (minutes).
func BuildComponent(ctx context.Context, c catalog.Component, o BuildOptions) (v1.ImageIndex, error) {
	platforms := o.Platforms
	if len(platforms) == 0 {
		platforms = DefaultPlatforms()
	}
	// Check every platform before a build of minutes fails on the last one
	// (Index would refuse a platform given twice, but only at the end).
	seen := map[string]bool{}
	for _, p := range platforms {
		if p.OS != "linux" || p.Architecture == "" || p.Variant != "" || p.OSVersion != "" {
			return nil, fmt.Errorf("building %s for %s: only linux/<GOARCH> platforms, without a variant, are supported", c.Name, p.String())
		}
		if seen[p.Architecture] {
			return nil, fmt.Errorf("building %s: platform %s given twice", c.Name, p.String())
		}
		seen[p.Architecture] = true
	}
	progress := o.Progress
	if progress == nil {
		progress = io.Discard
	}
	dir, err := os.MkdirTemp("", "liqo-image-")
	if err != nil {
		return nil, err
	}
	// The images hold the binaries' bytes from here on (Layer reads them
	// when called), so the files can go when the build ends.
	defer func() { _ = os.RemoveAll(dir) }()

	imgs := make([]v1.Image, 0, len(platforms))
	for _, p := range platforms {
		bin := filepath.Join(dir, p.Architecture, c.Name)
		fmt.Fprintf(progress, "%s %s: go build %s\n", c.Name, p.String(), c.Package)
		start := time.Now()
		if err := goBuild(ctx, c, o.Version, p.Architecture, bin); err != nil {
			return nil, err
		}
		img, err := binaryImage(p.Architecture, bin, "/"+c.Name, o.CABundle)
		if err != nil {
			return nil, fmt.Errorf("building the %s image for %s: %w", c.Name, p.String(), err)
		}
		d, err := img.Digest()
		if err != nil {
			return nil, err
		}
		size := int64(0)
		if fi, err := os.Stat(bin); err == nil {
			size = fi.Size()
		}
		fmt.Fprintf(progress, "%s %s: %.1f MB binary, image %s (%s)\n", c.Name, p.String(), float64(size)/1e6, d, time.Since(start).Round(100*time.Millisecond))
		imgs = append(imgs, img)
	}
	return Index(imgs...)
}

// goBuild compiles c's main package for linux/arch into out.
func goBuild(ctx context.Context, c catalog.Component, version, arch, out string) error {
	ldflags := "-s -w -buildid="
	if c.VersionVar != "" && version != "" {
		// go build splits -ldflags at spaces and reads quotes.
		if strings.ContainsAny(version, " \t\n'\"") {
			return fmt.Errorf("building %s: version %q has spaces or quotes", c.Name, version)
		}
		ldflags += " -X " + c.VersionVar + "=" + version
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", out, c.Package)
	// Later values win over the environment's. The microarchitecture levels
	// are pinned to Go's defaults: a developer's GOAMD64=v3 would change
	// the digest and make an image that some nodes cannot run.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch, "GOAMD64=v1", "GOARM64=v8.0")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = errors.Join(err, ctxErr)
		}
		return fmt.Errorf("building %s for linux/%s: %w\n%s", c.Name, arch, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return nil
}
