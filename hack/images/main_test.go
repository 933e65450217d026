package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/pflag"

	"github.com/liqo-go/liqo/pkg/images"
	"github.com/liqo-go/liqo/pkg/images/catalog"
)

// fakeBuild stands for images.BuildComponent without compiling anything:
// an index of one-file images, one per platform, and the options it was
// given recorded in got.
func fakeBuild(got *[]images.BuildOptions) builder {
	return func(_ context.Context, c catalog.Component, o images.BuildOptions) (v1.ImageIndex, error) {
		*got = append(*got, o)
		var imgs []v1.Image
		for _, p := range o.Platforms {
			img, err := images.FromEntries([]images.Entry{{Path: "/" + c.Name, Data: []byte(p.Architecture)}},
				images.Config{Entrypoint: []string{"/" + c.Name}, Architecture: p.Architecture})
			if err != nil {
				return nil, err
			}
			imgs = append(imgs, img)
		}
		return images.Index(imgs...)
	}
}

// startRegistry serves a registry on a loopback port for the test's life.
func startRegistry(t *testing.T) string {
	t.Helper()
	reg, err := images.NewRegistry(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	reg.Serve(l)
	t.Cleanup(func() { _ = reg.Close() })
	return l.Addr().String()
}

// TestRun checks what the command does with what it built: the index
// written into the layout under the chart's image name, pushed under the
// mirrored name, the options passed down and the digest printed.
func TestRun(t *testing.T) {
	out := filepath.Join(t.TempDir(), "images")
	host := startRegistry(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var built []images.BuildOptions
	var stdout, stderr bytes.Buffer
	args := []string{"--output", out, "--registry", host, "--tag", "v0.1.0", "--ca-bundle", ""}
	if err := run(ctx, args, &stdout, &stderr, fakeBuild(&built)); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}

	components := catalog.All()
	if len(built) != len(components) {
		t.Fatalf("%d builds, want %d (one per server component)", len(built), len(components))
	}
	for _, b := range built {
		var platforms []string
		for _, p := range b.Platforms {
			platforms = append(platforms, p.String())
		}
		if want := []string{"linux/amd64", "linux/arm64"}; !slices.Equal(platforms, want) || b.Version != "v0.1.0" || b.CABundle != "" {
			t.Errorf("built with platforms %q, version %q, CA bundle %q; want %q, v0.1.0 and none", platforms, b.Version, b.CABundle, want)
		}
	}

	l, err := layout.ImageIndexFromPath(out)
	if err != nil {
		t.Fatal(err)
	}
	m, err := l.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	written := map[string]v1.Hash{}
	for _, d := range m.Manifests {
		written[d.Annotations["io.containerd.image.name"]] = d.Digest
	}
	if len(m.Manifests) != len(components) {
		t.Errorf("the layout lists %d images, want %d", len(m.Manifests), len(components))
	}
	for _, c := range components {
		digest, ok := written[c.Ref("v0.1.0")]
		if !ok {
			t.Errorf("the layout lists %v, not %s", written, c.Ref("v0.1.0"))
			continue
		}
		ref, err := name.ParseReference(host+"/liqo-go/"+c.Name+":v0.1.0", name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		pulled, err := remote.Index(ref, remote.WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		if d, err := pulled.Digest(); err != nil || d != digest {
			t.Errorf("pushed index %s (%v), want %s", d, err, digest)
		}
		for _, want := range []string{"pushed " + ref.Name(), "index " + digest.String()} {
			if !strings.Contains(stdout.String(), want) {
				t.Errorf("the output does not say %q:\n%s", want, stdout.String())
			}
		}
	}
}

// TestRunRejects checks that bad flags fail before anything is built.
func TestRunRejects(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"tag", []string{"--tag", "no spaces"}, "--tag"},
		{"platform", []string{"--platforms", "linux/amd64,"}, "--platforms"},
		{"component", []string{"--components", "liqo-nope"}, "no server component"},
		{"CA bundle", []string{"--ca-bundle", "/nonexistent/ca.crt"}, "--ca-bundle"},
		{"registry", []string{"--registry", "http://127.0.0.1:5000"}, "--registry"},
		{"argument", []string{"build"}, "unexpected arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var built []images.BuildOptions
			var stdout, stderr bytes.Buffer
			args := append([]string{"--output", t.TempDir()}, tt.args...)
			err := run(context.Background(), args, &stdout, &stderr, fakeBuild(&built))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
			if len(built) != 0 {
				t.Errorf("built %d components before failing", len(built))
			}
		})
	}

	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"--help"}, &stdout, &stderr, nil); !errors.Is(err, pflag.ErrHelp) || !strings.Contains(stderr.String(), "--registry") {
		t.Errorf("--help: error %v, usage %q", err, stderr.String())
	}
}
