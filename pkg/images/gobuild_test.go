package images

import (
	"bytes"
	"context"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/liqo-go/liqo/pkg/images/catalog"
)

// logWriter hands each write to t.Log: BuildComponent's progress shows
// with -v or when the test fails.
type logWriter struct{ t *testing.T }

func (w logWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// testBundle writes a stand-in CA bundle: the test checks that the bundle
// given is the one in the image, not the machine's certificates.
func testBundle(t *testing.T) (string, []byte) {
	t.Helper()
	data := []byte("-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n")
	p := filepath.Join(t.TempDir(), "ca-certificates.crt")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p, data
}

// imageFile is the content and mode of the file at p (no leading slash) of
// img's only layer.
func imageFile(t *testing.T, img v1.Image, p string) ([]byte, int64) {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%d layers, want 1", len(layers))
	}
	_, entries := readLayer(t, layers[0])
	e, ok := entries[p]
	if !ok {
		t.Fatalf("the layer has no %s", p)
	}
	return e.data, e.hdr.Mode
}

// checkStatic fails unless bin is an ELF executable for arch that needs no
// dynamic loader: a program header PT_INTERP names the loader a
// dynamically linked binary needs, which an empty image does not have.
func checkStatic(t *testing.T, bin []byte, arch string) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		t.Fatalf("not an ELF file: %v", err)
	}
	machines := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}
	if want, ok := machines[arch]; !ok || f.Machine != want {
		t.Errorf("ELF machine %s, want the one of %s", f.Machine, arch)
	}
	if f.Type != elf.ET_EXEC {
		t.Errorf("ELF type %s, want %s", f.Type, elf.ET_EXEC)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("the binary has a PT_INTERP header: it is dynamically linked")
		}
	}
}

// runBinary writes bin to a file and runs it with args, returning its
// combined output.
func runBinary(t *testing.T, bin []byte, args ...string) (string, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "bin")
	if err := os.WriteFile(p, bin, 0o700); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(p, args...).CombinedOutput()
	return string(out), err
}

// TestControllerManagerImage builds the controller manager's image index
// twice from the same sources, checks the two digests are equal, looks
// inside each platform's image and pushes the index to a registry.
//
// With Go's build cache warm, each build takes a few seconds; the first
// build on a machine compiles every dependency for both architectures
// (about 2 and 3 minutes on 2 cores).
func TestControllerManagerImage(t *testing.T) {
	c, err := catalog.Lookup(catalog.ControllerManager)
	if err != nil {
		t.Fatal(err)
	}
	bundle, bundleData := testBundle(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	opts := BuildOptions{CABundle: bundle, Version: "v0.0.0-test", Progress: logWriter{t}}
	build := func() v1.ImageIndex {
		t.Helper()
		start := time.Now()
		idx, err := BuildComponent(ctx, c, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("index %s in %s", digestOf(t, idx), time.Since(start).Round(time.Millisecond))
		return idx
	}
	idx := build()
	if again := build(); digestOf(t, again) != digestOf(t, idx) {
		t.Errorf("two builds of the same sources: index digests %s and %s", digestOf(t, idx), digestOf(t, again))
	}

	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, d := range m.Manifests {
		if d.Platform != nil {
			platforms = append(platforms, d.Platform.String())
		}
	}
	if want := []string{"linux/amd64", "linux/arm64"}; !slices.Equal(platforms, want) {
		t.Fatalf("the index lists platforms %q, want %q", platforms, want)
	}

	for _, d := range m.Manifests {
		arch := d.Platform.Architecture
		t.Run(arch, func(t *testing.T) {
			img, err := idx.Image(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"/" + c.Name}; !slices.Equal(cfg.Config.Entrypoint, want) || len(cfg.Config.Cmd) != 0 {
				t.Errorf("entrypoint %q cmd %q, want %q and no cmd", cfg.Config.Entrypoint, cfg.Config.Cmd, want)
			}
			if cfg.OS != "linux" || cfg.Architecture != arch {
				t.Errorf("config for %s/%s, listed as linux/%s", cfg.OS, cfg.Architecture, arch)
			}
			bin, mode := imageFile(t, img, c.Name)
			if mode != 0o755 {
				t.Errorf("%s: mode %o, want 755", c.Name, mode)
			}
			checkStatic(t, bin, arch)
			if ca, _ := imageFile(t, img, strings.TrimPrefix(caBundlePath, "/")); !bytes.Equal(ca, bundleData) {
				t.Errorf("%s holds %q, want the bundle given", caBundlePath, ca)
			}
			if arch != runtime.GOARCH {
				return
			}
			// The entrypoint is the command: its --help lists its flags.
			out, err := runBinary(t, bin, "--help")
			if err != nil || !strings.Contains(out, "--kubeconfig") {
				t.Errorf("%s --help: %v, output %q", c.Name, err, out)
			}
			// The build stamps the version into the binary.
			if out, err := runBinary(t, bin, "--version"); err != nil || !strings.Contains(out, opts.Version) {
				t.Errorf("%s --version: %v, output %q, want %q", c.Name, err, out, opts.Version)
			}
		})
	}

	_, host := startRegistry(t)
	if err := Push(ctx, host, c.Ref("test"), idx); err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(host+"/liqo-go/"+c.Name+":test", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	pulled, err := remote.Index(ref, remote.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := digestOf(t, pulled), digestOf(t, idx); got != want {
		t.Errorf("pulled index %s, pushed %s", got, want)
	}
}

// TestBuildComponentVersion builds a command of its own module with a
// version variable and runs it: the version given is the one it prints.
func TestBuildComponentVersion(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":  "module example.com/hello\n\ngo 1.22\n",
		"main.go": "package main\n\nvar version = \"unset\"\n\nfunc main() { println(version) }\n",
	}
	for f, data := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	c := catalog.Component{Name: "hello", Package: "example.com/hello", Image: "example.com/hello", VersionVar: "main.version"}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	platform := v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
	idx, err := BuildComponent(ctx, c, BuildOptions{Platforms: []v1.Platform{platform}, Version: "v1.2.3", Progress: logWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	img, err := idx.Image(firstManifest(t, idx))
	if err != nil {
		t.Fatal(err)
	}
	bin, _ := imageFile(t, img, "hello")
	checkStatic(t, bin, runtime.GOARCH)
	if out, err := runBinary(t, bin); err != nil || out != "v1.2.3\n" {
		t.Errorf("the binary printed %q (%v), want the version v1.2.3", out, err)
	}
}

// firstManifest is the digest of the first image of idx.
func firstManifest(t *testing.T, idx v1.ImageIndex) v1.Hash {
	t.Helper()
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) == 0 {
		t.Fatal("an empty index")
	}
	return m.Manifests[0].Digest
}

// TestBuildComponentRejects checks the inputs refused before anything is
// compiled.
func TestBuildComponentRejects(t *testing.T) {
	c := catalog.Component{Name: "hello", Package: "example.com/hello", Image: "example.com/hello", VersionVar: "main.version"}
	tests := []struct {
		name string
		o    BuildOptions
		want string
	}{
		{"windows", BuildOptions{Platforms: []v1.Platform{{OS: "windows", Architecture: "amd64"}}}, "only linux"},
		{"variant", BuildOptions{Platforms: []v1.Platform{{OS: "linux", Architecture: "arm", Variant: "v7"}}}, "without a variant"},
		{"no architecture", BuildOptions{Platforms: []v1.Platform{{OS: "linux"}}}, "only linux"},
		{"twice", BuildOptions{Platforms: []v1.Platform{{OS: "linux", Architecture: "arm64"}, {OS: "linux", Architecture: "arm64"}}}, "given twice"},
		{"version with a space", BuildOptions{Version: "v1 -X main.other=1"}, "spaces or quotes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := BuildComponent(context.Background(), c, tt.o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}
