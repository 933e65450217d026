package testbed

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/liqo-go/liqo/pkg/images"
	"github.com/liqo-go/liqo/pkg/images/catalog"
)

// TestImageTag is the tag PushComponents publishes our images under.
const TestImageTag = "testbed"

// PushComponents builds the images of the named server components (all
// of them when none is named) from the current sources, for this machine's
// architecture only, and publishes them in the cluster's registry as
// <component image>:TestImageTag, the names a chart uses by default: the
// cluster's pods run them as a user's would. Each image is built once per
// process; Go's build cache makes a rebuild of unchanged sources quick.
func (c *Cluster) PushComponents(ctx context.Context, names ...string) error {
	return c.PushComponentsTagged(ctx, TestImageTag, names...)
}

// PushComponentsTagged is PushComponents under another tag: the same
// images as another version, for upgrade tests.
func (c *Cluster) PushComponentsTagged(ctx context.Context, tag string, names ...string) error {
	if c.RegistryAddr() == "" {
		return fmt.Errorf("cluster %s has no registry: our images need real nodes", c.Name)
	}
	if len(names) == 0 {
		for _, comp := range catalog.All() {
			names = append(names, comp.Name)
		}
	}
	for _, n := range names {
		comp, err := catalog.Lookup(n)
		if err != nil {
			return err
		}
		idx, err := componentImage(ctx, comp)
		if err != nil {
			return err
		}
		if err := images.Push(ctx, c.RegistryAddr(), comp.Ref(tag), idx); err != nil {
			return err
		}
	}
	return nil
}

var (
	componentImagesMu sync.Mutex
	componentImages   = map[string]v1.ImageIndex{}
)

func componentImage(ctx context.Context, comp catalog.Component) (v1.ImageIndex, error) {
	componentImagesMu.Lock()
	defer componentImagesMu.Unlock()
	if idx, ok := componentImages[comp.Name]; ok {
		return idx, nil
	}
	idx, err := images.BuildComponent(ctx, comp, images.BuildOptions{
		Platforms: []v1.Platform{{OS: "linux", Architecture: runtime.GOARCH}},
		Version:   TestImageTag,
	})
	if err != nil {
		return nil, fmt.Errorf("building the %s image: %w", comp.Name, err)
	}
	componentImages[comp.Name] = idx
	return idx, nil
}
