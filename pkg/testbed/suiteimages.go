package testbed

import (
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/liqo-go/liqo/pkg/images"
)

// The images the Multi-Cluster Services conformance suite runs, by the
// names it gives them: socat listeners behind its Service, and a request
// pod it execs nc and nslookup in. Nothing can be pulled here, so the
// registry serves toolbox images of the same commands made of Debian's
// packages (socat, netcat-openbsd, bind9-dnsutils), whose output is what
// the suite parses: bind's nslookup prints its "Address:" lines.
const (
	SocatImage    = "docker.io/alpine/socat:1.7.4.4"
	NetshootImage = "docker.io/nicolaka/netshoot:v0.15"
)

// The Debian files the images copy; hostPackages installs them.
const (
	debianDash     = "/bin/dash"
	debianSocat    = "/usr/bin/socat"
	debianNc       = "/bin/nc.openbsd"
	debianNslookup = "/usr/bin/nslookup"
	debianDig      = "/usr/bin/dig"
)

// suiteImages builds SocatImage and NetshootImage on busybox (grep, awk,
// tr, sleep: what the suite's scripts run beside the programs) with
// Debian's dash as their shell (see images.Toolbox).
func suiteImages() (map[string]v1.Image, error) {
	socat, err := images.Toolbox(busyboxPath, debianDash, images.Program{Path: "/usr/bin/socat", HostFile: debianSocat})
	if err != nil {
		return nil, fmt.Errorf("building %s: %w", SocatImage, err)
	}
	netshoot, err := images.Toolbox(busyboxPath, debianDash,
		images.Program{Path: "/usr/bin/nc", HostFile: debianNc},
		images.Program{Path: "/usr/bin/nslookup", HostFile: debianNslookup},
		images.Program{Path: "/usr/bin/dig", HostFile: debianDig})
	if err != nil {
		return nil, fmt.Errorf("building %s: %w", NetshootImage, err)
	}
	return map[string]v1.Image{SocatImage: socat, NetshootImage: netshoot}, nil
}
