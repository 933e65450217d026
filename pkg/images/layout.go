package images

import (
	"errors"
	"fmt"
	"os"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/match"
	"github.com/google/go-containerregistry/pkg/v1/partial"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Annotations of an index.json entry naming the image it points to.
const (
	// refNameAnnotation is the OCI one: the tag alone, as skopeo's
	// oci:<dir>:<tag> and buildkit's exports write it.
	refNameAnnotation = "org.opencontainers.image.ref.name"
	// imageNameAnnotation is containerd's: the full name, which
	// "ctr images import" gives the image.
	imageNameAnnotation = "io.containerd.image.name"
)

// WriteLayout writes t, a v1.Image or a v1.ImageIndex, into the OCI image
// layout directory dir (created if absent, added to if present) under the
// upstream name ("registry.k8s.io/pause:3.10"). An entry of index.json
// already there under that name is replaced, so writing the same name
// twice leaves one entry; blobs shared with other images are stored once.
func WriteLayout(dir, upstream string, t remote.Taggable) error {
	ref, err := name.ParseReference(upstream)
	if err != nil {
		return fmt.Errorf("image name %q: %w", upstream, err)
	}
	p, err := openLayout(dir)
	if err != nil {
		return err
	}
	annotations := layout.WithAnnotations(map[string]string{
		refNameAnnotation:   ref.Identifier(),
		imageNameAnnotation: containerdName(ref),
	})
	same := match.Annotation(imageNameAnnotation, containerdName(ref))
	switch t := t.(type) {
	case v1.Image:
		err = p.ReplaceImage(t, same, annotations)
	case v1.ImageIndex:
		err = p.ReplaceIndex(t, same, annotations)
	default:
		return fmt.Errorf("writing %s: a %T is neither an image nor an index", upstream, t)
	}
	if err != nil {
		return fmt.Errorf("writing %s into %s: %w", upstream, dir, err)
	}
	return nil
}

// ReadLayout returns the index WriteLayout wrote into the OCI image layout
// directory dir under the upstream name: how a release's images, shipped as
// a layout, are pushed to a registry.
func ReadLayout(dir, upstream string) (v1.ImageIndex, error) {
	ref, err := name.ParseReference(upstream)
	if err != nil {
		return nil, fmt.Errorf("image name %q: %w", upstream, err)
	}
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("opening the image layout %s: %w", dir, err)
	}
	root, err := p.ImageIndex()
	if err != nil {
		return nil, fmt.Errorf("reading the image layout %s: %w", dir, err)
	}
	found, err := partial.FindIndexes(root, match.Annotation(imageNameAnnotation, containerdName(ref)))
	if err != nil {
		return nil, fmt.Errorf("reading the image layout %s: %w", dir, err)
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("the image layout %s has %d indexes named %s, want one", dir, len(found), containerdName(ref))
	}
	return found[0], nil
}

// openLayout opens the layout at dir, or starts an empty one there.
func openLayout(dir string) (layout.Path, error) {
	p, err := layout.FromPath(dir)
	if err == nil {
		return p, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("opening the image layout %s: %w", dir, err)
	}
	p, err = layout.Write(dir, empty.Index)
	if err != nil {
		return "", fmt.Errorf("creating the image layout %s: %w", dir, err)
	}
	return p, nil
}

// containerdName is ref fully spelled as containerd names images:
// "docker.io/library/busybox:latest", where go-containerregistry's Name
// says "index.docker.io/library/busybox:latest".
func containerdName(ref name.Reference) string {
	host := ref.Context().RegistryStr()
	if host == name.DefaultRegistry {
		host = "docker.io"
	}
	sep := ":"
	if _, ok := ref.(name.Digest); ok {
		sep = "@"
	}
	return host + "/" + ref.Context().RepositoryStr() + sep + ref.Identifier()
}
