package playground

import (
	"github.com/spf13/cobra"
)

// Name is the playground's binary; liqoctl playground runs it.
const Name = "liqo-playground"

// NewCommand returns the liqo-playground command and its subcommands.
func NewCommand() *cobra.Command {
	dir := defaultDir()
	cmd := &cobra.Command{
		Use:   Name,
		Short: "Run local Kubernetes clusters to try liqo on, with no container runtime",
		Long: `The playground runs real Kubernetes control planes (etcd, kube-apiserver,
kube-controller-manager, kube-scheduler) as local processes, with kwok simulating
worker nodes. The binaries are built once from the Go module proxy and cached.

Every cluster gets an admin kubeconfig at DIR/<name>.kubeconfig. liqoctl
playground runs this binary with the same arguments.`,
		Example: `  liqo-playground up
  liqo-playground status
  liqo-playground down`,
		SilenceUsage: true,
	}
	cmd.PersistentFlags().StringVar(&dir, "dir", dir,
		"directory holding the playground's kubeconfigs, state and data ($LIQO_PLAYGROUND_DIR)")
	cmd.AddCommand(newUpCommand(&dir), newDownCommand(&dir), newStatusCommand(&dir), newServeCommand(&dir), newBuildCommand())
	return cmd
}
