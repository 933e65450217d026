package peer

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
)

// The v0.5 manual's liqoctl peer NAME and liqoctl unpeer NAME name the
// remote cluster (its ForeignCluster) instead of giving its kubeconfig:
// here NAME is the remote cluster's ID, reached through the context of
// that name in the local kubeconfig unless a --remote- flag says how.

// remoteOrName is the Args of peer and unpeer: at most one NAME, and,
// without it, one of the flags naming the remote cluster.
func remoteOrName(cmd *cobra.Command, args []string) error {
	if err := cobra.MaximumNArgs(1)(cmd, args); err != nil {
		return err
	}
	if len(args) == 1 || remoteFlagGiven(cmd) {
		return nil
	}
	return fmt.Errorf("at least one of the flags in the group [%s] is required, or the remote cluster's NAME",
		strings.Join(factory.RemoteFlags, " "))
}

// remoteFlagGiven tells whether a flag naming the remote cluster was given.
func remoteFlagGiven(cmd *cobra.Command) bool {
	for _, f := range factory.RemoteFlags {
		if cmd.Flags().Changed(f) {
			return true
		}
	}
	return false
}

// hasContext tells whether the local cluster's kubeconfig has a context
// named name.
func hasContext(local *factory.Cluster, name string) (bool, error) {
	kc, err := local.LoadKubeconfig()
	if err != nil {
		return false, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	_, ok := kc.Contexts[name]
	return ok, nil
}

// remoteByName sets remote to the context name of the local kubeconfig,
// unless a --remote- flag named the remote cluster already; it returns
// false, with no error, when the kubeconfig has no such context.
func remoteByName(cmd *cobra.Command, local, remote *factory.Cluster, name string) (bool, error) {
	if remoteFlagGiven(cmd) {
		return true, nil
	}
	ok, err := hasContext(local, name)
	if err != nil || !ok {
		return false, err
	}
	remote.Context = name
	return true, nil
}

// checkName refuses a remote cluster that is not the one NAME named.
func checkName(name, remoteID string) error {
	if name != "" && remoteID != name {
		return fmt.Errorf("the remote cluster is %q, not %q as NAME says: NAME is the remote cluster's ID (its ForeignCluster's name)", remoteID, name)
	}
	return nil
}

// reverseInBand tells whether the remote cluster consumes the local one
// through the network fabric's tunnel (an Identity of the local cluster,
// on the remote, checked as InBandTLSServerName): peer NAME then peers the
// other way in band too, as peer in-band --bidirectional would have.
func reverseInBand(ctx context.Context, p *pairInfo, remote client.Client) (bool, error) {
	var ids authv1beta1.IdentityList
	if err := remote.List(ctx, &ids, client.InNamespace(consts.TenantNamespace(p.local.ID))); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	for _, id := range ids.Items {
		if id.Spec.AuthParams.TLSServerName == InBandTLSServerName {
			return true, nil
		}
	}
	return false, nil
}

// runByName is liqoctl unpeer NAME: through the context NAME (or the
// --remote- flags), else with the kubeconfig kept by peer out-of-band.
func (o *UnpeerOptions) runByName(ctx context.Context, cmd *cobra.Command, name string) error {
	o.name, o.remoteID = name, name
	ok, err := remoteByName(cmd, &o.Local, &o.Remote, name)
	if err != nil {
		return err
	}
	if ok {
		return o.Run(ctx)
	}
	if err := o.Local.Connect(ctx, min(o.Timeout/4, 10*time.Second)); err != nil {
		return err
	}
	if _, err := o.outOfBandSecret(ctx, name); err != nil {
		return fmt.Errorf("unpeer %s: the kubeconfig has no context %q, and %w; pass --remote-kubeconfig or --remote-context, or, for a provider gone for good, run liqoctl force unpeer %s",
			name, name, err, name)
	}
	return o.runOutOfBand(ctx, name)
}
