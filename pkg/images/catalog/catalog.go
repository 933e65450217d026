// Package catalog names the images of Liqo's own server components: one
// table of their names, main packages and image names (ghcr.io/liqo-go/<name>,
// the names the Helm chart uses by default). It holds no image code, so that
// liqoctl, which names the mover's image, links only this; pkg/images
// builds the images it lists.
package catalog

import (
	"fmt"
	"strings"
)

// Repository is where the images of the server components are published:
// the prefix of every Component's Image.
const Repository = "ghcr.io/liqo-go"

// ControllerManager is the name of the controller manager's component: the
// consumer- and provider-side controllers, the webhooks and the virtual
// kubelets, in one binary.
const ControllerManager = "liqo-controller-manager"

// Gateway is the network fabric's gateway: one end of a peering's
// WireGuard tunnel, run by the gateway controllers.
const Gateway = "liqo-gateway"

// Fabric is the network fabric's node agent, a DaemonSet on the real
// nodes.
const Fabric = "liqo-fabric"

// Mover copies a volume's files between two pods, for liqoctl move
// volume.
const Mover = "liqo-mover"

// Component is a server component of Liqo shipped as an image: one Go main
// package, built into one static binary, alone in its image.
type Component struct {
	// Name names the binary, which the image holds at /<Name> and runs as
	// its entrypoint.
	Name string
	// Package is the import path of the main package.
	Package string
	// Image is the image's name without a tag, the one a Helm chart uses by
	// default.
	Image string
	// VersionVar is the variable of the package that the build sets to the
	// version with -ldflags -X ("main.version"); empty when the command has
	// none.
	VersionVar string
}

// Ref is the component's image tagged tag:
// "ghcr.io/liqo-go/liqo-controller-manager:v1.0.0".
func (c Component) Ref(tag string) string {
	return c.Image + ":" + tag
}

// All lists every server component, in the order they are built.
// The slice is the caller's.
func All() []Component {
	return []Component{{
		Name:       ControllerManager,
		Package:    "github.com/liqo-go/liqo/cmd/liqo-controller-manager",
		Image:      Repository + "/" + ControllerManager,
		VersionVar: "main.version",
	}, {
		Name:       Gateway,
		Package:    "github.com/liqo-go/liqo/cmd/liqo-gateway",
		Image:      Repository + "/" + Gateway,
		VersionVar: "main.version",
	}, {
		Name:       Fabric,
		Package:    "github.com/liqo-go/liqo/cmd/liqo-fabric",
		Image:      Repository + "/" + Fabric,
		VersionVar: "main.version",
	}, {
		Name:       Mover,
		Package:    "github.com/liqo-go/liqo/cmd/liqo-mover",
		Image:      Repository + "/" + Mover,
		VersionVar: "main.version",
	}}
}

// Lookup is the server component called name.
func Lookup(name string) (Component, error) {
	var names []string
	for _, c := range All() {
		if c.Name == name {
			return c, nil
		}
		names = append(names, c.Name)
	}
	return Component{}, fmt.Errorf("no server component %q (there are: %s)", name, strings.Join(names, ", "))
}
