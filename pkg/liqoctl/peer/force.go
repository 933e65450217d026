package peer

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/completion"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
)

// NewForceCommand returns liqoctl force, with its subcommand unpeer.
func NewForceCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "force",
		Short: "Undo what the remote side can no longer take part in",
		Long: `Force actions that normally need both clusters, when one of them is gone for
good: they act on the local cluster only and leave whatever is on the other
one to its administrator.`,
		Example: `  liqoctl force unpeer milan --kubeconfig ~/.kube/rome`,
		Args:    cobra.NoArgs,
	}
	cmd.AddCommand(newForceUnpeerCommand())
	return cmd
}

func newForceUnpeerCommand() *cobra.Command {
	o := &UnpeerOptions{localOnly: true}
	cmd := &cobra.Command{
		Use:   "unpeer CLUSTER_ID",
		Short: "Tear down the peering with a provider that is gone for good, on the local cluster only",
		Long: `Tear down, on the local cluster (the consumer), the peering with the provider
CLUSTER_ID without contacting it: for a provider that is gone for good (its
kubeconfig lost, the cluster deleted). The virtual nodes (their pods are
evicted and recreated elsewhere), the ResourceSlices, the Identity and the
network fabric in the local tenant namespace are removed, as liqoctl unpeer
does (the namespace is kept unless --delete-namespaces is given); the Tenant
and the rest on the provider stay, for its administrator to remove if it
ever comes back. A reverse peering (CLUSTER_ID consuming this cluster) is
kept, with the tenant namespace it lives in.

While PVCs have their volumes on the provider, the command refuses, naming
them, unless --delete-remote-volumes is given. Use liqoctl unpeer whenever
the provider can be reached: it cleans both sides.`,
		Example:           `  liqoctl force unpeer milan --kubeconfig ~/.kube/rome`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completion.PeerClusterID,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.remoteID = args[0]
			if err := consts.ValidateClusterID(o.remoteID); err != nil {
				return err
			}
			o.out = &output.Printer{W: cmd.OutOrStdout()}
			ctx, cancel := context.WithTimeout(cmd.Context(), o.Timeout)
			defer cancel()
			if err := o.Local.Connect(ctx, o.Timeout/4); err != nil {
				return err
			}
			if err := o.requirePeering(ctx); err != nil {
				return err
			}
			return o.Run(ctx)
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

// requirePeering refuses a cluster ID this cluster has no peering with: a
// mistyped ID would otherwise succeed, having removed nothing.
func (o *UnpeerOptions) requirePeering(ctx context.Context) error {
	ns := consts.TenantNamespace(o.remoteID)
	err := o.Local.Client.Get(ctx, types.NamespacedName{Name: ns}, &corev1.Namespace{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("no peering with %s here (no namespace %s): liqoctl info lists the peerings", o.remoteID, ns)
	}
	return err
}
