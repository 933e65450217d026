package peer

import (
	"context"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
	"github.com/liqo-go/liqo/pkg/peering"
)

// The manual peering: each administrator runs, on their own cluster, the
// step of the authentication that cluster does, and hands the result to
// the other (liqoctl authenticate does all of them with access to both).
//
//	provider: liqoctl create nonce --remote-cluster-id CONSUMER
//	          liqoctl get nonce --remote-cluster-id CONSUMER        -> NONCE
//	consumer: liqoctl generate tenant --remote-cluster-id PROVIDER --nonce NONCE > tenant.yaml
//	provider: kubectl apply -f tenant.yaml
//	          liqoctl generate identity --remote-cluster-id CONSUMER > identity.yaml
//	consumer: kubectl apply -f identity.yaml

// onePeer is what the commands run on one cluster about one peer take: the
// cluster's flags, the peer's ID (--remote-cluster-id) and a timeout.
type onePeer struct {
	cluster  factory.Cluster
	remoteID string
	timeout  time.Duration
	// print is -o, on the commands that print a manifest.
	print *output.Flags
	local *factory.ClusterInfo
	// remoteTenantNS is --remote-tenant-namespace, on the commands
	// printing a manifest for the other cluster.
	remoteTenantNS string
}

// bindRemoteTenantNamespace adds the reference's --remote-tenant-namespace,
// the namespace of the other cluster the printed manifest goes to: here
// always the tenant namespace named after this cluster's ID, which the
// flag may only repeat (runE checks).
func (o *onePeer) bindRemoteTenantNamespace(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.remoteTenantNS, "remote-tenant-namespace", "",
		"namespace of the other cluster the manifest goes to: always liqo-tenant-<this cluster's ID> here, which the flag may only repeat")
}

// bind binds the flags; withOutput adds -o for the commands that print a
// manifest.
func (o *onePeer) bind(cmd *cobra.Command, peerRole string, withOutput bool, timeout time.Duration) {
	fs := cmd.Flags()
	o.cluster.AddPeerFlags(fs)
	fs.StringVar(&o.remoteID, "remote-cluster-id", "", "cluster ID of the "+peerRole)
	fs.DurationVar(&o.timeout, "timeout", timeout, "give up after this long")
	if withOutput {
		o.print = output.NewObjectFlags("yaml")
		o.print.AddFlags(cmd, "print the manifest")
	}
	_ = cmd.MarkFlagRequired("remote-cluster-id")
}

// runE runs f with the cluster connected, under the timeout, once the
// flags are checked.
func (o *onePeer) runE(f func(ctx context.Context, cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		id, err := o.cluster.PeerID(o.remoteID)
		if err != nil {
			return err
		}
		o.remoteID = id
		if err := consts.ValidateClusterID(o.remoteID); err != nil {
			return fmt.Errorf("--remote-cluster-id: %w", err)
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
		defer cancel()
		if err := o.cluster.Connect(ctx, min(o.timeout, 10*time.Second)); err != nil {
			return err
		}
		local, err := o.cluster.FindComponents(ctx)
		if err != nil {
			return err
		}
		if local.ID == o.remoteID {
			return fmt.Errorf("--remote-cluster-id %q is this cluster's own ID: give the ID of the other cluster", o.remoteID)
		}
		if want := consts.TenantNamespace(local.ID); o.remoteTenantNS != "" && o.remoteTenantNS != want {
			return fmt.Errorf("--remote-tenant-namespace %q: the other cluster keeps this cluster's objects in %s (a tenant namespace is named after the peer's cluster ID, "+
				"and the controllers look for them there only); leave the flag out", o.remoteTenantNS, want)
		}
		o.local = local
		return f(ctx, cmd, args)
	}
}

func newCreateNonceCommand(use string) *cobra.Command {
	o := &onePeer{}
	cmd := &cobra.Command{
		Use:   use,
		Short: "Issue a nonce for a consumer to sign (manual peering, on the provider)",
		Long: `Issue, on this cluster (the provider), the nonce a consumer signs to prove
its identity: the first step of the manual peering, for administrators who
each have access to their own cluster only. It ensures the consumer's tenant
namespace and the nonce Secret in it, waits for the controller manager to
fill it, and prints the nonce. Hand it to the consumer's administrator, who
runs liqoctl generate tenant --remote-cluster-id <this cluster's ID> --nonce
<NONCE>. liqoctl get nonce prints it again. With --output the nonce Secret
is printed instead, without its nonce, for the provider's controller
manager to fill once it is applied there.

A nonce is replaced once a Tenant authenticated with it, and after a day
unused: a leaked signature cannot be replayed.`,
		Example: `  liqoctl create nonce --remote-cluster-id rome --kubeconfig ~/.kube/milan`,
		Args:    cobra.NoArgs,
	}
	o.bind(cmd, "consumer", false, time.Minute)
	o.print = output.NewObjectFlags("")
	o.print.AddFlags(cmd, "print the nonce Secret instead of creating it")
	cmd.RunE = o.runE(func(ctx context.Context, cmd *cobra.Command, _ []string) error {
		if o.print.Requested() {
			return o.print.PrintObject(cmd.OutOrStdout(), peering.ForgeNonceSecret(o.remoteID))
		}
		out := &output.Printer{W: cmd.OutOrStdout()}
		c := o.cluster.Client
		if err := peering.EnsureTenantNamespaces(ctx, out, peering.TenantOf{Client: c, Peer: o.remoteID, Role: "local"}); err != nil {
			return err
		}
		nonce, err := peering.EnsureNonce(ctx, c, out, o.remoteID)
		if err != nil {
			return err
		}
		out.Info("Nonce retrieved: %s", base64.StdEncoding.EncodeToString(nonce))
		return nil
	})
	return cmd
}

func newGetNonceCommand() *cobra.Command {
	o := &onePeer{}
	cmd := &cobra.Command{
		Use:   "nonce",
		Short: "Print the nonce issued for a consumer (manual peering, on the provider)",
		Long: `Print, and only print, the nonce this cluster (the provider) issued for a
consumer with liqoctl create nonce, as the consumer's liqoctl generate tenant
--nonce takes it (base64).`,
		Example: `  liqoctl get nonce --remote-cluster-id rome --kubeconfig ~/.kube/milan > nonce.txt`,
		Args:    cobra.NoArgs,
	}
	o.bind(cmd, "consumer", false, time.Minute)
	cmd.RunE = o.runE(func(ctx context.Context, cmd *cobra.Command, _ []string) error {
		nonce, err := peering.GetNonce(ctx, o.cluster.Client, o.remoteID)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(cmd.OutOrStdout(), base64.StdEncoding.EncodeToString(nonce))
		return err
	})
	return cmd
}

// decodeNonce reads the --nonce flag as liqoctl get nonce prints it.
func decodeNonce(s string) ([]byte, error) {
	nonce, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("--nonce is not base64 (%w): give it as liqoctl get nonce prints it on the provider", err)
	}
	if len(nonce) != consts.NonceSize {
		return nil, fmt.Errorf("--nonce has %d bytes, a nonce has %d: give it whole, as liqoctl get nonce prints it on the provider", len(nonce), consts.NonceSize)
	}
	return nonce, nil
}

func newGenerateTenantCommand() *cobra.Command {
	o := &onePeer{}
	var nonceFlag, proxyURL string
	cmd := &cobra.Command{
		Use:   "tenant",
		Short: "Sign a provider's nonce and print the Tenant to apply there (manual peering, on the consumer)",
		Long: `Sign, on this cluster (the consumer), the nonce a provider issued (liqoctl
create nonce there), and print the Tenant manifest the provider's
administrator applies (kubectl apply -f). The Tenant carries this cluster's
public key, a certificate request for its client key, and the signature,
which binds the nonce to both cluster IDs and to that key: the provider
checks it against the nonce it issued before it issues a certificate.

The controller manager signs (the key never leaves it): the command ensures
the tenant namespace of the provider and the signed-nonce Secret in it, and
waits for the signature. The manifest goes to standard output, the progress
to standard error. Next, on the provider: liqoctl generate identity.

With --proxy-url, the Tenant asks for this cluster's components to reach the
provider through that proxy: the Identity the provider generates carries it
into the kubeconfig this cluster builds.`,
		Example: `  liqoctl generate tenant --remote-cluster-id milan --nonce "$(cat nonce.txt)" --kubeconfig ~/.kube/rome > tenant.yaml
  liqoctl generate tenant --remote-cluster-id milan --nonce "$(cat nonce.txt)" --proxy-url http://proxy.rome.example:3128 > tenant.yaml`,
		Args: cobra.NoArgs,
	}
	o.bind(cmd, "provider", true, time.Minute)
	o.bindRemoteTenantNamespace(cmd)
	cmd.Flags().StringVar(&nonceFlag, "nonce", "", "the nonce the provider issued, as liqoctl get nonce prints it there")
	_ = cmd.MarkFlagRequired("nonce")
	addProxyURLFlag(cmd.Flags(), &proxyURL)
	run := o.runE(func(ctx context.Context, cmd *cobra.Command, _ []string) error {
		nonce, _ := decodeNonce(nonceFlag) // checked before connecting
		out := &output.Printer{W: cmd.ErrOrStderr()}
		c := o.cluster.Client
		if err := peering.EnsureTenantNamespaces(ctx, out, peering.TenantOf{Client: c, Peer: o.remoteID, Role: "local"}); err != nil {
			return err
		}
		signed, err := peering.SignNonce(ctx, c, out, o.remoteID, nonce)
		if err != nil {
			return err
		}
		return o.print.PrintObject(cmd.OutOrStdout(), peering.ForgeTenant(o.local.ID, signed, proxyURL))
	})
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if _, err := decodeNonce(nonceFlag); err != nil {
			return err
		}
		return run(cmd, args)
	}
	return cmd
}

func newGenerateIdentityCommand() *cobra.Command {
	o := &onePeer{}
	cmd := &cobra.Command{
		Use:   "identity",
		Short: "Print the Identity a consumer applies to use this provider (manual peering, on the provider)",
		Long: `Print, on this cluster (the provider), the Identity manifest the consumer's
administrator applies (kubectl apply -f) once the consumer's Tenant is
applied here: the credentials this cluster issued for the consumer (its
API server, CA and the consumer's signed client certificate) and the
tenant namespace holding the consumer's objects here. The consumer's
controller manager turns it into a kubeconfig; its private key never left
the consumer.

The command waits for this cluster to authenticate the Tenant, and fails
with the provider's reason if it was rejected (a nonce this cluster did not
issue, a signature that does not verify). Next, on the consumer: liqoctl
create resourceslice.`,
		Example: `  liqoctl generate identity --remote-cluster-id rome --kubeconfig ~/.kube/milan > identity.yaml`,
		Args:    cobra.NoArgs,
	}
	o.bind(cmd, "consumer", true, time.Minute)
	o.bindRemoteTenantNamespace(cmd)
	cmd.RunE = o.runE(func(ctx context.Context, cmd *cobra.Command, _ []string) error {
		id, err := peering.IdentityFor(ctx, o.cluster.Client, o.remoteID, o.local.ID)
		if err != nil {
			return err
		}
		return o.print.PrintObject(cmd.OutOrStdout(), id)
	})
	return cmd
}

func newGetKubeconfigCommand() *cobra.Command {
	o := &onePeer{}
	cmd := &cobra.Command{
		Use:   "kubeconfig [IDENTITY_NAME]",
		Short: "Print the kubeconfig this consumer uses on a provider",
		Long: `Print, on this cluster (the consumer), the kubeconfig its controller manager
built from the Identity for a provider: the rights the provider granted this
cluster, in its tenant namespace there. For debugging: kubectl with it sees
what the consumer's components see. IDENTITY_NAME defaults to the
control-plane Identity of the provider.`,
		Example: `  liqoctl get kubeconfig --remote-cluster-id milan --kubeconfig ~/.kube/rome > milan-as-rome.kubeconfig`,
		Args:    cobra.MaximumNArgs(1),
	}
	o.bind(cmd, "provider", false, time.Minute)
	cmd.RunE = o.runE(func(ctx context.Context, cmd *cobra.Command, args []string) error {
		ns := consts.TenantNamespace(o.remoteID)
		name := consts.IdentityName(o.remoteID)
		if len(args) == 1 {
			name = args[0]
		}
		var id authv1beta1.Identity
		switch err := o.cluster.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &id); {
		case apierrors.IsNotFound(err):
			return fmt.Errorf("no Identity %s/%s: this cluster is not authenticated with %s (liqoctl authenticate, or apply the Identity liqoctl generate identity printed there)",
				ns, name, o.remoteID)
		case err != nil:
			return err
		}
		if id.Status.KubeconfigSecretRef == nil {
			return fmt.Errorf("the Identity %s/%s has no kubeconfig yet: is the liqo controller manager running?", ns, name)
		}
		var s corev1.Secret
		if err := o.cluster.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: id.Status.KubeconfigSecretRef.Name}, &s); err != nil {
			return fmt.Errorf("reading the kubeconfig Secret of Identity %s/%s: %w", ns, name, err)
		}
		_, err := cmd.OutOrStdout().Write(s.Data[consts.KubeconfigKey])
		return err
	})
	return cmd
}
