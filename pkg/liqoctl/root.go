package liqoctl

import (
	"github.com/spf13/cobra"

	"github.com/liqo-go/liqo/pkg/liqoctl/info"
	"github.com/liqo-go/liqo/pkg/liqoctl/offload"
	"github.com/liqo-go/liqo/pkg/liqoctl/peer"
	"github.com/liqo-go/liqo/pkg/liqoctl/playground"
)

// NewRootCommand returns the liqoctl command tree.
func NewRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "liqoctl",
		Short: "Manage multi-cluster federation: peering, namespace offloading and a local playground",
		Long: `liqoctl peers Kubernetes clusters, offloads namespaces to remote clusters and
runs a local playground of real Kubernetes control planes with simulated nodes.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(playground.NewCommand(), peer.NewCommand(), peer.NewUnpeerCommand(), info.NewCommand(),
		offload.NewCommand(), offload.NewUnoffloadCommand())
	return root
}
