package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefusesBadInput: a version the chart cannot carry or a platform that
// is not GOOS/GOARCH is refused before anything is built or written.
func TestRefusesBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "--version is required"},
		{[]string{"--version", "1.2.3"}, "not SemVer with a leading v"},
		{[]string{"--version", "v1.2"}, "not SemVer with a leading v"},
		{[]string{"--version", "latest"}, "not SemVer with a leading v"},
		{[]string{"--version", "v1.2.3", "--platforms", "linux"}, `"linux" is not GOOS/GOARCH`},
		{[]string{"--version", "v1.2.3", "--platforms", "linux/amd64/v8"}, "is not GOOS/GOARCH"},
		{[]string{"--version", "v1.2.3", "extra"}, "unexpected arguments"},
	} {
		out := filepath.Join(t.TempDir(), "dist")
		err := run(context.Background(), append(c.args, "--output", out), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error saying %q", c.args, err, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%q: the output directory was made", c.args)
		}
	}
}

// TestKrewManifestAndSums: the krew manifest has a platform per archive,
// at the release's URL and with the archive's SHA-256, and SHA256SUMS
// lists every file of the release with its SHA-256, sorted by name.
func TestKrewManifestAndSums(t *testing.T) {
	dir := t.TempDir()
	archives := []built{{platform{"linux", "arm64"}, "liqoctl-v1.2.3-linux-arm64.tar.gz"}, {platform{"windows", "amd64"}, "liqoctl-v1.2.3-windows-amd64.zip"}}
	for _, a := range archives {
		if err := os.WriteFile(filepath.Join(dir, a.file), []byte(a.file), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := writeKrewManifest(dir, "v1.2.3", "https://example.com/r/", archives); err != nil {
		t.Fatal(err)
	}
	manifest, err := os.ReadFile(filepath.Join(dir, krewManifest))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range archives {
		sum, err := sha256File(filepath.Join(dir, a.file))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"uri: https://example.com/r/" + a.file, "sha256: " + sum, "bin: " + a.platform.binary(), "os: " + a.platform.os, "arch: " + a.platform.arch} {
			if !strings.Contains(string(manifest), want) {
				t.Errorf("plugin.yaml lacks %q:\n%s", want, manifest)
			}
		}
	}
	if _, err := writeSums(dir); err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile(filepath.Join(dir, sumsFile))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		sum, name, _ := strings.Cut(line, "  ")
		if got, err := sha256File(filepath.Join(dir, name)); err != nil || got != sum {
			t.Errorf("SHA256SUMS: %s for %s, which has %s (%v)", sum, name, got, err)
		}
		names = append(names, name)
	}
	want := []string{archives[0].file, archives[1].file, krewManifest}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("SHA256SUMS lists %v, want %v", names, want)
	}
}
