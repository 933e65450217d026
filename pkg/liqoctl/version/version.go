package version

import "runtime/debug"

// unset is the value of version when the build did not set it.
const unset = "dev"

// version is liqoctl's release, set at link time:
//
//	go build -ldflags "-X github.com/liqo-go/liqo/pkg/liqoctl/version.version=v1.2.3" ./cmd/liqoctl
//
// It is a variable only because -X can set nothing else; nothing assigns it
// at run time.
var version = unset

// Version returns liqoctl's version: the one set at link time or, for a
// plain `go build` or `go install`, what the Go toolchain recorded in the
// binary (the main module's version, else the VCS revision), else "dev".
func Version() string { return resolve(version, debug.ReadBuildInfo) }

// resolve is Version with the link-time value and the build information
// as arguments, for tests.
func resolve(linked string, buildInfo func() (*debug.BuildInfo, bool)) string {
	if linked != "" && linked != unset {
		return linked
	}
	bi, ok := buildInfo()
	if !ok || bi == nil {
		return unset
	}
	// "(devel)" is what the toolchain records when it knows no version:
	// a build outside a VCS checkout, or with -buildvcs=false.
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var revision string
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	switch {
	case revision == "":
		return unset
	case modified:
		return revision + "-dirty"
	default:
		return revision
	}
}
