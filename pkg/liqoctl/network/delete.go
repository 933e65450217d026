package network

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/liqoctl/output"
	"github.com/liqo-go/liqo/pkg/peering/netsetup"
)

// NewDeleteCommands returns the subcommands of liqoctl delete removing the
// network fabric's objects one at a time.
func NewDeleteCommands() []*cobra.Command {
	var out []*cobra.Command
	for _, k := range []fabricKind{configurationKind, serverKind, clientKind, publicKeyKind} {
		out = append(out, newDelete(k))
	}
	return out
}

// deleteEffect says what deleting an object of each kind undoes.
var deleteEffect = map[string]string{
	"configuration": "this cluster forgets the peer's CIDRs and releases their remapping (a later Configuration may remap them elsewhere)",
	"gatewayserver": "the gateway server, its pod and Service go, and the tunnel through it with them",
	"gatewayclient": "the gateway client and its pod go, and the tunnel through it with them",
	"publickey":     "this cluster's gateway for the peer stops accepting the peer gateway's key, and the tunnel stops",
}

func newDelete(k fabricKind) *cobra.Command {
	m := &manual{}
	cmd := &cobra.Command{
		Use:   k.use + " NAME",
		Short: "Delete a " + k.kind + " made with liqoctl create " + k.use + " (manual network fabric)",
		Long: `Delete the ` + k.kind + ` NAME of this cluster: ` + deleteEffect[k.use] + `.
It is looked for in the tenant namespace of --remote-cluster-id, or without
the flag in whichever tenant namespace holds one of that name. liqoctl
network disconnect and reset delete the whole fabric with a peer on both
clusters.`,
		Example: `  liqoctl delete ` + k.use + ` milan
  liqoctl delete ` + k.use + ` milan --remote-cluster-id milan --kubeconfig ~/.kube/rome`,
		Args: cobra.ExactArgs(1),
	}
	fs := cmd.Flags()
	m.cluster.AddPeerFlags(fs)
	fs.StringVar(&m.remoteID, "remote-cluster-id", "", "cluster ID of the peer, whose tenant namespace holds the object (default: any)")
	fs.DurationVar(&m.timeout, "timeout", time.Minute, "give up after this long")
	cmd.RunE = m.runE(func(ctx context.Context, cmd *cobra.Command, args []string, s *netsetup.Side) error {
		obj, err := find(ctx, s.Client, k, args[0], m.remoteID)
		if err != nil {
			return err
		}
		if err := client.IgnoreNotFound(s.Client.Delete(ctx, obj)); err != nil {
			return fmt.Errorf("deleting %s %s/%s: %w", k.kind, obj.GetNamespace(), obj.GetName(), err)
		}
		(&output.Printer{W: cmd.OutOrStdout()}).Info("%s %s/%s deleted", k.kind, obj.GetNamespace(), obj.GetName())
		return nil
	})
	return cmd
}
