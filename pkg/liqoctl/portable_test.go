package liqoctl

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const (
	module  = "github.com/liqo-go/liqo"
	command = module + "/cmd/liqoctl"
)

// clientSide are the packages of ours, outside apis, pkg/liqoctl and the
// chart, that liqoctl may link: each uses only API clients or is pure.
var clientSide = map[string]string{
	"pkg/consts":           "the names, labels and annotations the components and liqoctl share",
	"pkg/wait":             "polling an object until a check passes",
	"pkg/peering":          "the peering steps, through the two clusters' API servers",
	"pkg/peering/netsetup": "the network fabric's objects on the two clusters, through their API servers",
	"pkg/peeringuser":      "peering users, through the provider's API server",
	"pkg/ipam":             "address arithmetic (a peer's remapped CIDRs), standard library only",
	"pkg/images/catalog":   "the names of the components' images, no image code",
}

// serverSide are modules only the components, the data plane and the
// testbed need: kernel interfaces (Linux only), the image registry and
// builder, the virtual kubelet. (The storage provisioner is ours, package
// storage/provision, which the check of our packages below covers.)
var serverSide = []string{
	"golang.zx2c4.com/wireguard",
	"github.com/google/nftables",
	"github.com/vishvananda/netlink",
	"github.com/vishvananda/netns",
	"github.com/google/go-containerregistry",
	"github.com/virtual-kubelet/virtual-kubelet",
}

// TestLinksNoServerCode: liqoctl links no controller, data-plane or
// testbed package of ours, and none of the server side's modules, so that
// it stays a small client that builds for every OS (TestBuildsEverywhere).
func TestLinksNoServerCode(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", command).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", command, err)
	}
	deps := strings.Fields(string(out))
	ours := 0
	for _, pkg := range deps {
		for _, mod := range serverSide {
			if pkg == mod || strings.HasPrefix(pkg, mod+"/") {
				t.Errorf("liqoctl links %s (of %s), a server-side module", pkg, mod)
			}
		}
		rel, ok := strings.CutPrefix(pkg, module+"/")
		if !ok {
			continue
		}
		ours++
		switch {
		case rel == "cmd/liqoctl", under(rel, "apis"), under(rel, "pkg/liqoctl"), under(rel, "deploy/charts/liqo"):
		case clientSide[rel] != "":
		default:
			t.Errorf("liqoctl links %s, which is neither API types, liqoctl's own, the chart nor a client-side helper: "+
				"move what liqoctl needs of it into apis or a client-side package", pkg)
		}
	}
	if ours < 20 {
		t.Fatalf("go list -deps gave %d packages of ours: expected liqoctl's whole tree", ours)
	}
	t.Logf("liqoctl links %d packages, %d of them ours", len(deps), ours)
}

func under(pkg, dir string) bool { return pkg == dir || strings.HasPrefix(pkg, dir+"/") }

// TestBuildsEverywhere: liqoctl cross-compiles, without cgo, for every
// system it is released for (ReleasePlatforms) but the one running the
// test, which every other test builds for: a kubectl plugin users of
// macOS and Windows can install too.
func TestBuildsEverywhere(t *testing.T) {
	built := 0
	for _, p := range ReleasePlatforms() {
		goos, goarch, _ := strings.Cut(p, "/")
		if goos == runtime.GOOS {
			continue
		}
		built++
		t.Run(goos+"-"+goarch, func(t *testing.T) {
			// As make release builds it, so that the two share Go's build cache.
			cmd := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(t.TempDir(), "liqoctl"), command)
			cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("GOOS=%s GOARCH=%s go build %s: %v\n%s", goos, goarch, command, err, out)
			}
		})
	}
	if built < 4 {
		t.Errorf("built liqoctl for %d other systems, want macOS and Windows on amd64 and arm64 at least", built)
	}
}
