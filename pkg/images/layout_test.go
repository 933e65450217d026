package images

import (
	"path/filepath"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// digestOf is the digest of an image or an index.
func digestOf(t *testing.T, x interface{ Digest() (v1.Hash, error) }) v1.Hash {
	t.Helper()
	d, err := x.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestWriteLayout(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "oci")
	idx, err := Index(archImage(t, "amd64"), archImage(t, "arm64"))
	if err != nil {
		t.Fatal(err)
	}
	pause := archImage(t, "amd64")
	// busybox:1.35 is docker.io/library/busybox:1.35 spelt short: its second
	// write replaces the first entry instead of adding one.
	writes := []struct {
		name string
		t    remote.Taggable
	}{
		{"docker.io/library/busybox:1.35", idx},
		{"registry.k8s.io/pause:3.10", pause},
		{"busybox:1.35", idx},
	}
	for _, w := range writes {
		if err := WriteLayout(dir, w.name, w.t); err != nil {
			t.Fatal(err)
		}
	}

	read, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := read.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		tag    string
		digest v1.Hash
	}{
		"docker.io/library/busybox:1.35": {"1.35", digestOf(t, idx)},
		"registry.k8s.io/pause:3.10":     {"3.10", digestOf(t, pause)},
	}
	if len(m.Manifests) != len(want) {
		t.Fatalf("index.json lists %d entries, want %d: %+v", len(m.Manifests), len(want), m.Manifests)
	}
	for _, d := range m.Manifests {
		w, ok := want[d.Annotations[imageNameAnnotation]]
		if !ok || d.Annotations[refNameAnnotation] != w.tag || d.Digest != w.digest {
			t.Errorf("entry %s %v, want one of %v", d.Digest, d.Annotations, want)
		}
	}

	// The index's images are in the layout too, not only its manifest.
	child, err := read.ImageIndex(digestOf(t, idx))
	if err != nil {
		t.Fatal(err)
	}
	cm, err := child.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range cm.Manifests {
		img, err := child.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		layers, err := img.Layers()
		if err != nil || len(layers) != 1 {
			t.Fatalf("image %s of the index: %d layers, %v", d.Digest, len(layers), err)
		}
		rc, err := layers[0].Compressed()
		if err != nil {
			t.Fatalf("layer of image %s: %v", d.Digest, err)
		}
		rc.Close()
	}
}

// TestReadLayout reads back by name the index WriteLayout wrote, short
// name or full, and refuses a name the layout does not hold.
func TestReadLayout(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "oci")
	idx, err := Index(archImage(t, "amd64"), archImage(t, "arm64"))
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteLayout(dir, "ghcr.io/liqo-go/liqo-mover:v1.0.0", idx); err != nil {
		t.Fatal(err)
	}
	if err := WriteLayout(dir, "busybox:1.35", idx); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ghcr.io/liqo-go/liqo-mover:v1.0.0", "docker.io/library/busybox:1.35", "busybox:1.35"} {
		got, err := ReadLayout(dir, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if digestOf(t, got) != digestOf(t, idx) {
			t.Errorf("%s: read %s, wrote %s", name, digestOf(t, got), digestOf(t, idx))
		}
	}
	if _, err := ReadLayout(dir, "ghcr.io/liqo-go/liqo-mover:v2.0.0"); err == nil || !strings.Contains(err.Error(), "0 indexes named") {
		t.Errorf("a name the layout does not hold: %v, want an error saying none is there", err)
	}
	if _, err := ReadLayout(filepath.Join(t.TempDir(), "none"), "busybox:1.35"); err == nil {
		t.Error("a missing layout: no error")
	}
}
