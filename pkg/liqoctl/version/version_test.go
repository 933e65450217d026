package version

import (
	"runtime/debug"
	"testing"
)

func TestResolve(t *testing.T) {
	info := func(main string, settings ...string) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/liqo-go/liqo", Version: main}}
			for i := 0; i+1 < len(settings); i += 2 {
				bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
			}
			return bi, true
		}
	}
	const rev = "b72fbe34e0419190f77201ee1ce1fbc8395ccb7f"
	for _, tc := range []struct {
		name      string
		linked    string
		buildInfo func() (*debug.BuildInfo, bool)
		want      string
	}{
		{"set at link time wins", "v1.2.3", info("v0.9.0", "vcs.revision", rev), "v1.2.3"},
		{"module version", unset, info("v0.0.0-20261125040101-b72fbe34e041+dirty", "vcs.revision", rev), "v0.0.0-20261125040101-b72fbe34e041+dirty"},
		{"empty link-time value is unset", "", info("v1.0.0"), "v1.0.0"},
		{"revision when the module has no version", unset, info("(devel)", "vcs.revision", rev, "vcs.modified", "false"), rev},
		{"modified checkout", unset, info("(devel)", "vcs.revision", rev, "vcs.modified", "true"), rev + "-dirty"},
		{"nothing recorded", unset, info("(devel)"), unset},
		{"no build information", unset, func() (*debug.BuildInfo, bool) { return nil, false }, unset},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := resolve(tc.linked, tc.buildInfo); got != tc.want {
				t.Errorf("resolve(%q) = %q, want %q", tc.linked, got, tc.want)
			}
		})
	}
	if Version() == "" {
		t.Error("Version() is empty")
	}
}
