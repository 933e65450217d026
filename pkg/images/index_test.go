package images

import (
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// archImage is a one-file image labelled for arch.
func archImage(t *testing.T, arch string) v1.Image {
	t.Helper()
	img, err := FromEntries([]Entry{{Path: "/arch", Data: []byte(arch)}}, Config{Architecture: arch})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func TestIndex(t *testing.T) {
	amd, arm := archImage(t, "amd64"), archImage(t, "arm64")
	idx, err := Index(amd, arm)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 2 {
		t.Fatalf("%d manifests, want 2", len(m.Manifests))
	}
	for i, img := range []v1.Image{amd, arm} {
		d, _ := img.Digest()
		cfg, _ := img.ConfigFile()
		got := m.Manifests[i]
		if got.Digest != d || got.Platform == nil || got.Platform.OS != "linux" || got.Platform.Architecture != cfg.Architecture {
			t.Errorf("manifest %d: %+v (platform %+v), want %s for linux/%s", i, got, got.Platform, d, cfg.Architecture)
		}
	}

	if _, err := Index(amd, archImage(t, "amd64")); err == nil || !strings.Contains(err.Error(), "two images") {
		t.Errorf("two amd64 images: error %v", err)
	}
}
