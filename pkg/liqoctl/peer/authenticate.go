package peer

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
	"github.com/liqo-go/liqo/pkg/peering"
	"github.com/liqo-go/liqo/pkg/wait"
)

// NewAuthenticateCommand returns liqoctl authenticate: liqoctl peer's
// authentication stage alone.
func NewAuthenticateCommand() *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Use:   "authenticate",
		Short: "Authenticate the local cluster (consumer) with a remote cluster (provider), with access to both",
		Long: `Authenticate the local cluster, the consumer, with a remote cluster, the
provider: the first stage of liqoctl peer, with no network fabric, no
ResourceSlice and no virtual node. The consumer signs a nonce the provider
issued, the provider checks it and issues a client certificate for the
consumer (its Tenant), and the consumer turns it into the credentials its
components use on the provider (its Identity). Afterwards the consumer may
ask for resources: liqoctl create resourceslice.

The command needs admin access to both clusters; administrators who each
have access to one run the same steps by hand: liqoctl create nonce,
generate tenant and generate identity. It is idempotent.

With --in-band the network fabric is connected first (as liqoctl network
connect does, with the same flags) and the consumer reaches the provider's
API server through its tunnel, as liqoctl peer in-band does. With
--proxy-url the consumer's components reach it through that proxy.`,
		Example: `  liqoctl authenticate --remote-kubeconfig ~/.kube/milan
  liqoctl authenticate --context rome --remote-context milan
  liqoctl authenticate --remote-kubeconfig ~/.kube/milan --proxy-url socks5://proxy.rome.example:1080`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.out = &output.Printer{W: cmd.OutOrStdout(), Verbose: o.Verbose}
			ctx, cancel := context.WithTimeout(cmd.Context(), o.Timeout)
			defer cancel()
			// liqoctl peer's first stage: the network only for in-band.
			o.CreateResourceSlice, o.NetworkingDisabled = false, !o.InBand
			return o.Run(ctx)
		},
	}
	fs := cmd.Flags()
	o.Local.AddLocalFlags(fs)
	o.Remote.AddRemoteFlags(fs, &o.Local)
	factory.RequireRemote(cmd)
	fs.BoolVar(&o.InBand, "in-band", false, "connect the network fabric first and reach the provider's API server through its tunnel, as liqoctl peer in-band does (the network flags apply)")
	addProxyURLFlag(fs, &o.ProxyURL)
	o.Network.AddConnectFlags(fs)
	fs.DurationVar(&o.Timeout, "timeout", 2*time.Minute, "give up after this long")
	fs.BoolVarP(&o.Verbose, "verbose", "v", false, "print how long each step took")
	return cmd
}

// NewUnauthenticateCommand returns liqoctl unauthenticate.
func NewUnauthenticateCommand() *cobra.Command {
	o := &UnpeerOptions{}
	cmd := &cobra.Command{
		Use:   "unauthenticate",
		Short: "Undo liqoctl authenticate: remove the consumer's Identity and its Tenant on the provider",
		Long: `Undo the authentication of the local cluster, the consumer, with a remote
cluster, the provider: the consumer's Identity (and the nonce it signed) are
removed here, its Tenant (and the nonce issued for it) on the provider, which
revokes the consumer's rights there. The tenant namespaces stay (liqoctl
unpeer removes them).

It refuses while the consumer has ResourceSlices or VirtualNodes of that
provider: delete them first (liqoctl delete resourceslice, delete
virtualnode), or unpeer.`,
		Example: `  liqoctl unauthenticate --remote-kubeconfig ~/.kube/milan`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.out = &output.Printer{W: cmd.OutOrStdout()}
			ctx, cancel := context.WithTimeout(cmd.Context(), o.Timeout)
			defer cancel()
			return o.unauthenticate(ctx)
		},
	}
	fs := cmd.Flags()
	o.Local.AddLocalFlags(fs)
	o.Remote.AddRemoteFlags(fs, &o.Local)
	factory.RequireRemote(cmd)
	fs.DurationVar(&o.Timeout, "timeout", 2*time.Minute, "give up after this long")
	fs.BoolVar(&o.Wait, "wait", true, "wait until the Identity and the Tenant are gone")
	return cmd
}

func (o *UnpeerOptions) unauthenticate(ctx context.Context) error {
	p, err := connectPair(ctx, &o.Local, &o.Remote, o.Timeout, o.out)
	if err != nil {
		return err
	}
	local, remote := p.local.ID, p.remote.ID
	if err := refuseWhileUsed(ctx, o.Local.Client, remote); err != nil {
		return err
	}
	o.out.Step("Removing the Identity")
	if err := peering.RemoveIdentity(ctx, o.Local.Client, remote); err != nil {
		return err
	}
	o.out.Step("Removing the Tenant on the provider")
	if left := peering.RemoveTenant(ctx, o.Remote.Client, local); len(left) > 0 {
		return fmt.Errorf("could not remove on %s: %s", remote, strings.Join(left, "; "))
	}
	if o.Wait {
		id := &authv1beta1.Identity{ObjectMeta: metav1.ObjectMeta{Name: consts.IdentityName(remote), Namespace: consts.TenantNamespace(remote)}}
		if err := wait.Gone(ctx, o.Local.Client, client.ObjectKeyFromObject(id), id, "the Identity"); err != nil {
			return err
		}
		t := &authv1beta1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: local, Namespace: consts.TenantNamespace(local)}}
		if err := wait.Gone(ctx, o.Remote.Client, client.ObjectKeyFromObject(t), t, "the Tenant"); err != nil {
			return err
		}
	}
	o.out.Info("Unauthenticated from %s", remote)
	return nil
}

// refuseWhileUsed refuses while the consumer (c) has ResourceSlices or
// VirtualNodes of provider: they would lose their credentials.
func refuseWhileUsed(ctx context.Context, c client.Client, provider string) error {
	ns := consts.TenantNamespace(provider)
	var slices authv1beta1.ResourceSliceList
	if err := c.List(ctx, &slices, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("listing the ResourceSlices in %s: %w", ns, err)
	}
	var vns offv1beta1.VirtualNodeList
	if err := c.List(ctx, &vns, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("listing the VirtualNodes in %s: %w", ns, err)
	}
	var used []string
	for _, s := range slices.Items {
		used = append(used, "ResourceSlice "+s.Name)
	}
	for _, vn := range vns.Items {
		used = append(used, "VirtualNode "+vn.Name)
	}
	if len(used) > 0 {
		return fmt.Errorf("the peering with %s is in use (%s in %s): delete them first (liqoctl delete resourceslice, delete virtualnode) or run liqoctl unpeer",
			provider, strings.Join(used, ", "), ns)
	}
	return nil
}
