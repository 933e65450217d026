package peer

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	ipamv1alpha1 "github.com/liqo-go/liqo/apis/ipam/v1alpha1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/ipam"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/liqoctl/network"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
	"github.com/liqo-go/liqo/pkg/wait"
)

// InBandTLSServerName is the name an in-band peering checks the provider's
// API server certificate against: the consumer reaches it at an address of
// the network fabric, which the certificate does not name, and every
// cluster's API server certificate names its in-cluster Service.
const InBandTLSServerName = "kubernetes.default.svc"

type inBandOptions struct {
	Options
	bidirectional bool
}

func newInBandCommand() *cobra.Command {
	o := &inBandOptions{}
	cmd := &cobra.Command{
		Use:   "in-band",
		Short: "Peer through the network fabric: only the gateway's UDP port is exposed between the clusters",
		Long: `Peer the local cluster, the consumer, with a remote cluster, the provider,
with the control plane traffic inside the network fabric's tunnel: the
consumer's components reach the provider's API server through the tunnel,
so the clusters need to reach each other only on the gateway's UDP port
(liqoctl itself needs admin access to both, as for liqoctl peer).

It connects the networks first (as liqoctl network connect does, with the
same flags), then peers as liqoctl peer does, giving the consumer the
provider's API server at the address the fabric shows it at: the
provider's IP api-server (its kubernetes Service in its external CIDR) as
the consumer sees it, checked as ` + InBandTLSServerName + `. With
--bidirectional it then peers the other way the same way, over the same
tunnel. Like liqoctl peer it is idempotent: running it again with
--bidirectional adds the reverse peering.

The consumer's controller manager must run in the cluster (liqoctl
install): a manager running as a process outside the cluster has no route
into the fabric.`,
		Example: `  liqoctl peer in-band --context=consumer --remote-context=provider
  liqoctl peer in-band --context=consumer --remote-context=provider --bidirectional
  liqoctl peer in-band --kubeconfig ~/.kube/rome --remote-kubeconfig ~/.kube/milan --server-service-type NodePort`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.out = &output.Printer{W: cmd.OutOrStdout(), Verbose: o.Verbose}
			ctx, cancel := context.WithTimeout(cmd.Context(), o.Timeout)
			defer cancel()
			return o.run(ctx)
		},
	}
	o.Remote.AddRemoteFlags(cmd.Flags(), &o.Local)
	factory.RequireRemote(cmd)
	o.addFlags(cmd)
	_ = cmd.Flags().MarkHidden("in-band") // implied
	_ = cmd.Flags().MarkHidden("networking-disabled")
	cmd.Flags().BoolVar(&o.bidirectional, "bidirectional", false, "also peer the other way (the remote cluster consumes the local one), over the same tunnel")
	return cmd
}

func (o *inBandOptions) run(ctx context.Context) error {
	o.InBand, o.NetworkingDisabled = true, false
	if err := o.Run(ctx); err != nil {
		return err
	}
	if !o.bidirectional {
		return nil
	}
	o.out.Step("Peering the other way (--bidirectional)")
	reverse := o.Options
	reverse.Local, reverse.Remote = o.Remote, o.Local
	reverse.Local.Role, reverse.Remote.Role = "local", "remote"
	return reverse.Run(ctx)
}

// inBandAPIServer is the URL at which the local cluster's pods reach the
// remote cluster's API server through the network fabric: the remote's IP
// api-server (its kubernetes Service's twin in its external CIDR),
// translated by the local Configuration of the remote cluster.
func (o *Options) inBandAPIServer(ctx context.Context, p *pairInfo) (string, error) {
	o.out.Step("Finding the remote API server in the network fabric")
	start := time.Now()
	ip := &ipamv1alpha1.IP{}
	if err := wait.For(ctx, o.Remote.Client, types.NamespacedName{Namespace: o.Remote.Namespace, Name: ipamv1alpha1.APIServerIPName}, ip,
		"the remote cluster's API server to have an address in its external CIDR",
		func(ip *ipamv1alpha1.IP) error {
			if ip.Status.IP == "" {
				return wait.NotYet("IP %s/%s has no address yet", ip.Namespace, ip.Name)
			}
			return nil
		}); err != nil {
		return "", err
	}
	cfg := &netv1beta1.Configuration{}
	if err := wait.For(ctx, o.Local.Client, types.NamespacedName{Namespace: consts.TenantNamespace(p.remote.ID), Name: p.remote.ID}, cfg,
		"the local cluster to map the remote cluster's CIDRs", func(cfg *netv1beta1.Configuration) error {
			if !meta.IsStatusConditionTrue(cfg.Status.Conditions, netv1beta1.NetworkCIDRsConfiguredCondition) {
				return wait.NotYet("the Configuration of %s is not configured yet", p.remote.ID)
			}
			return nil
		}); err != nil {
		return "", err
	}
	m, ok, err := ipam.RemoteMapping(cfg)
	if err != nil || !ok {
		return "", fmt.Errorf("reading the local Configuration of %s: configured %v, %v", p.remote.ID, ok, err)
	}
	addr, ok := m.Translate(string(ip.Status.IP))
	if !ok {
		return "", fmt.Errorf("the remote API server's address %s is outside the remote CIDRs the local cluster knows", ip.Status.IP)
	}
	url := "https://" + net.JoinHostPort(addr, "443")
	o.out.Timed(start, "The remote API server is reached at %s through the tunnel (checked as %s)", url, InBandTLSServerName)
	return url, nil
}

func newUnpeerInBandCommand() *cobra.Command {
	o := &UnpeerOptions{}
	cmd := &cobra.Command{
		Use:   "in-band",
		Short: "Tear down an in-band peering, both directions, and the tunnel under it",
		Long: `Tear down a peering made with liqoctl peer in-band: the local cluster's
peering with the remote one, then the reverse peering if there is one
(--bidirectional), as liqoctl unpeer does for each, and finally the network
fabric between the two clusters (gateways, keys and address mappings, as
liqoctl network reset does). The virtual nodes go first, while the tunnel
the control plane uses is still up.

To end one direction only and keep the other, use liqoctl unpeer on the
consumer of that direction.`,
		Example: `  liqoctl unpeer in-band --context=consumer --remote-context=provider
  liqoctl unpeer in-band --kubeconfig ~/.kube/rome --remote-kubeconfig ~/.kube/milan`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.out = &output.Printer{W: cmd.OutOrStdout()}
			ctx, cancel := context.WithTimeout(cmd.Context(), o.Timeout)
			defer cancel()
			return o.runInBand(ctx)
		},
	}
	o.addFlags(cmd.Flags())
	o.Remote.AddRemoteFlags(cmd.Flags(), &o.Local)
	factory.RequireRemote(cmd)
	return cmd
}

// runInBand unpeers both ways, then resets the fabric under them.
func (o *UnpeerOptions) runInBand(ctx context.Context) error {
	reach := min(o.Timeout/4, 10*time.Second)
	for _, c := range []*factory.Cluster{&o.Local, &o.Remote} {
		if err := c.Connect(ctx, reach); err != nil {
			return err
		}
	}
	local, err := o.Local.FindComponents(ctx)
	if err != nil {
		return err
	}
	// The reverse peering, if any: the remote cluster consumes the local
	// one with an Identity the local cluster issued.
	var ids authv1beta1.IdentityList
	if err := o.Remote.Client.List(ctx, &ids, client.InNamespace(consts.TenantNamespace(local.ID))); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("looking for the reverse peering on the remote cluster: %w", err)
	}
	if err := o.Run(ctx); err != nil {
		return err
	}
	if len(ids.Items) > 0 {
		o.out.Step("Unpeering the other way (the remote cluster consumed the local one)")
		reverse := *o
		reverse.Local, reverse.Remote = o.Remote, o.Local
		reverse.Local.Role, reverse.Remote.Role = "local", "remote"
		if err := reverse.Run(ctx); err != nil {
			return err
		}
	}
	o.out.Step("Tearing down the tunnel")
	n := network.Options{Local: o.Local, Remote: o.Remote, Timeout: o.Timeout, Out: o.out}
	return n.Disconnect(ctx, true)
}
