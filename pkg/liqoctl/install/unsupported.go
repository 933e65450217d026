package install

import (
	"github.com/spf13/pflag"

	"github.com/liqo-go/liqo/pkg/liqoctl/compat"
)

// addUnsupportedFlags adds the reference's install flags that have no
// meaning here: those that would change nothing are ignored with a
// warning, those that would change the install are refused, saying what to
// use instead.
func addUnsupportedFlags(fs *pflag.FlagSet) {
	for _, name := range []string{"disable-telemetry", "disable-kernel-version-check", "dry-run", "enable-metrics", "skip-validation", "disable-api-server-sanity-check"} {
		fs.Bool(name, false, "")
	}
	compat.Ignore(fs, "disable-telemetry", "neither liqoctl nor Liqo sends telemetry here")
	compat.Ignore(fs, "disable-kernel-version-check", "there is no kernel version to check: the gateway runs WireGuard in user space (wireguard-go) where the kernel has none")
	compat.Refuse(fs, "dry-run", "--only-output-values writes the chart values the install would use and installs nothing")
	compat.Refuse(fs, "enable-metrics", "the chart has no metrics option (no metrics Service or ServiceMonitor to enable)")
	compat.Refuse(fs, "skip-validation", "the checks (the pod and Service CIDRs against the cluster's, the API server URL) stop installs that could not work: fix the flag the error names")
	compat.Refuse(fs, "disable-api-server-sanity-check", "give the URL peers reach the API server at with --api-server-url, which is taken as given")
}
