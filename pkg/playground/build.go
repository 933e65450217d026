package playground

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/liqo-go/liqo/pkg/testbed"
)

func newBuildCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "build",
		Short: "Build (or find in the cache) the binaries the playground runs",
		Long: `Build etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and
kwok, and for real nodes kubelet, kube-proxy, CoreDNS and the pause program,
from the Go module proxy into the cache ($LIQO_TESTBED_CACHE, default
~/.cache/liqo-go/testbed). Nothing is rebuilt unless a pinned version changes.
As root, it also installs the Debian packages real nodes run on (containerd,
runc, the CNI plugins, nftables, iptables, busybox-static) and the headless
Chromium the dashboard's tests drive, when missing.
'up' does this too; run it alone to prepare a machine ahead of time.`,
		Example: `  liqo-playground build
  LIQO_TESTBED_CACHE=/var/cache/liqo liqo-playground build`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			bins, err := testbed.EnsureBinaries(cmd.Context(), testbed.BuildOptions{Progress: out, RealNodes: true})
			if err != nil {
				return err
			}
			// The host packages real nodes run on, installed now so that
			// the clusters started next (a playground, the test packages
			// running in parallel) find them.
			if err := testbed.RealNodesSupported(); err != nil {
				fmt.Fprintf(out, "note: %v\n", err)
			} else if err := testbed.EnsureHostPackages(cmd.Context(), out); err != nil {
				return err
			} else if err := testbed.EnsureBrowser(cmd.Context(), out); err != nil {
				// The dashboard's browser tests and benchmark drive it.
				return err
			}
			v := testbed.DefaultVersions
			fmt.Fprintf(out, "testbed binaries ready (Kubernetes %s, etcd %s, kwok %s, CoreDNS %s, metrics-server %s):\n",
				v.Kubernetes, v.Etcd, v.Kwok, v.CoreDNS, v.MetricsServer)
			for _, p := range []string{bins.Etcd, bins.APIServer, bins.ControllerManager, bins.Scheduler, bins.Kubectl, bins.Kwok,
				bins.Kubelet, bins.KubeProxy, bins.CoreDNS, bins.MetricsServer, bins.Pause} {
				fmt.Fprintln(out, " ", p)
			}
			return nil
		},
	}
}
