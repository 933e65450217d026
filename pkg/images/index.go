package images

import (
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// Index builds a multi-platform OCI image index of per-platform images,
// each one built for its own architecture (Config.Architecture). The
// platform of each manifest is read from the image's config, so it cannot
// disagree with it; two images for one platform are an error, since a
// runtime would pick one of them arbitrarily.
func Index(imgs ...v1.Image) (v1.ImageIndex, error) {
	adds := make([]mutate.IndexAddendum, 0, len(imgs))
	seen := map[string]bool{}
	for _, img := range imgs {
		file, err := img.ConfigFile()
		if err != nil {
			return nil, err
		}
		platform := v1.Platform{OS: file.OS, Architecture: file.Architecture, Variant: file.Variant, OSVersion: file.OSVersion}
		if seen[platform.String()] {
			return nil, fmt.Errorf("two images for platform %s", platform.String())
		}
		seen[platform.String()] = true
		adds = append(adds, mutate.IndexAddendum{
			Add:        img,
			Descriptor: v1.Descriptor{Platform: &platform},
		})
	}
	return mutate.AppendManifests(empty.Index, adds...), nil
}
