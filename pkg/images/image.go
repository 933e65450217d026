package images

import (
	"runtime"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Config is what an image runs and where. Every field is optional.
type Config struct {
	Entrypoint []string
	Cmd        []string
	Env        []string
	WorkingDir string
	User       string
	// ExposedPorts are documentation for the reader of the image ("53/udp",
	// "8080/tcp"): a pod's ports come from its spec, not from these.
	ExposedPorts []string
	// Architecture is the image's CPU architecture as GOARCH spells it; this
	// machine's if empty. It is only a label: the entries' binaries must be
	// built for it.
	Architecture string
}

// FromEntries builds a one-layer OCI image of entries (see Layer) on an
// empty base, for linux. Its creation time is the Unix epoch, so the same
// entries and config give the same digest.
func FromEntries(entries []Entry, cfg Config) (v1.Image, error) {
	layer, err := Layer(entries)
	if err != nil {
		return nil, err
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:   layer,
		History: v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "github.com/liqo-go/liqo/pkg/images"},
	})
	if err != nil {
		return nil, err
	}
	file, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	file = file.DeepCopy()
	file.OS = "linux"
	file.Architecture = cfg.Architecture
	if file.Architecture == "" {
		file.Architecture = runtime.GOARCH
	}
	file.Created = v1.Time{Time: epoch}
	file.Config.Entrypoint = cfg.Entrypoint
	file.Config.Cmd = cfg.Cmd
	file.Config.Env = cfg.Env
	file.Config.WorkingDir = cfg.WorkingDir
	file.Config.User = cfg.User
	if len(cfg.ExposedPorts) > 0 {
		file.Config.ExposedPorts = map[string]struct{}{}
		for _, p := range cfg.ExposedPorts {
			file.Config.ExposedPorts[p] = struct{}{}
		}
	}
	return mutate.ConfigFile(img, file)
}
