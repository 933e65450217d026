package peeringuser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/liqo-go/liqo/pkg/liqoctl/compat"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
)

type options struct {
	cluster      factory.Cluster
	consumer     string
	apiServerURL string
	output       string
	onlyCommand  bool
	unclaimed    bool
	timeout      time.Duration
}

func (o *options) bind(cmd *cobra.Command) {
	fs := cmd.Flags()
	o.cluster.AddLocalFlags(fs)
	fs.DurationVar(&o.timeout, "timeout", time.Minute, "give up after this long")
}

func (o *options) connect(ctx context.Context) error {
	return o.cluster.Connect(ctx, min(o.timeout, 10*time.Second))
}

// NewGenerateCommands returns the subcommands of liqoctl generate this
// package implements: peering-user and peer-command.
func NewGenerateCommands() []*cobra.Command {
	return []*cobra.Command{newGeneratePeeringUser(), newGeneratePeerCommand()}
}

// NewDeleteCommands returns the subcommands of liqoctl delete this package
// implements: peering-user.
func NewDeleteCommands() []*cobra.Command {
	return []*cobra.Command{newDeletePeeringUser()}
}

const rightsHelp = `The peering user holds only what liqoctl peer and unpeer do on this cluster
for that consumer: reading this cluster's identity and liveness in the Liqo
namespace, and in the consumer's tenant namespace (liqo-tenant-<ID>) the
nonce Secret, the Tenant, the ResourceSlices and the network fabric's
objects. It reads no other Secret, creates no Pod, and sees no other
tenant. A ValidatingAdmissionPolicy (liqo-peering-users) also keeps it from
changing its Tenant's state (a cordoned consumer cannot lift the cordon)
and from writing the nonce.`

func newGeneratePeeringUser() *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "peering-user",
		Short: "Create a peering user for one consumer and print its kubeconfig",
		Long: `Create (or reuse) a peering user on this cluster, the provider, for the
consumer whose cluster ID is --consumer-cluster-id, and write its kubeconfig
to --output (or stdout). The consumer's administrator peers with it with
liqoctl peer --remote-kubeconfig FILE, and unpeers with liqoctl unpeer.

` + rightsHelp + `

The tenant namespace is created now. The token lives until liqoctl delete
peering-user revokes it. The kubeconfig's server is the URL peers reach this
API server at: --api-server-url, else the controller manager's
--api-server-url, else this kubeconfig's server; the cluster's CA is
included.`,
		Example: `  liqoctl generate peering-user --consumer-cluster-id rome --output rome-on-milan.kubeconfig --kubeconfig ~/.kube/milan
  liqoctl peer --kubeconfig ~/.kube/rome --remote-kubeconfig rome-on-milan.kubeconfig`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
			defer cancel()
			p := &output.Printer{W: cmd.ErrOrStderr()}
			if err := o.connect(ctx); err != nil {
				return err
			}
			u, err := Ensure(ctx, &o.cluster, EnsureOptions{Consumer: o.consumer, APIServerURL: o.apiServerURL, Timeout: o.timeout, Out: p})
			if err != nil {
				return err
			}
			kc, err := u.Kubeconfig()
			if err != nil {
				return err
			}
			if o.output == "" {
				_, err = cmd.OutOrStdout().Write(kc)
				return err
			}
			if err := os.WriteFile(o.output, kc, 0o600); err != nil {
				return err
			}
			p.Info("Kubeconfig of %s for cluster %s written to %s (server %s)", u.Name, u.Consumer, o.output, u.ServerURL)
			return nil
		},
	}
	o.bind(cmd)
	fs := cmd.Flags()
	fs.StringVar(&o.consumer, "consumer-cluster-id", "", "cluster ID of the consumer the peering user is for")
	fs.StringVarP(&o.output, "output", "o", "", "file to write the kubeconfig to (default: stdout)")
	fs.StringVar(&o.apiServerURL, "api-server-url", "", "URL at which peers reach this cluster's API server (default: the controller manager's --api-server-url, else the kubeconfig's server)")
	_ = cmd.MarkFlagRequired("consumer-cluster-id")
	fs.String("tls-compatibility-mode", "auto", "")
	compat.Ignore(fs, "tls-compatibility-mode", "the peering user authenticates with a ServiceAccount token, not a client certificate: "+
		"there is no key algorithm to choose for an API server that lacks Ed25519")
	return cmd
}

func newGeneratePeerCommand() *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "peer-command",
		Short: "Print the liqoctl peer out-of-band command a consumer runs to peer with this cluster",
		Long: `Create (or reuse) a peering user on this cluster, the provider, and print the
command a consumer's administrator runs on the consumer to peer with this
cluster, with no access to it beyond that command:

  liqoctl peer out-of-band NAME --auth-url URL --cluster-id ID --auth-token TOKEN

NAME and ID are this cluster's ID, URL is the URL peers reach its API server
at (--api-server-url, else the controller manager's --api-server-url, else
this kubeconfig's server), and TOKEN holds this cluster's CA and the peering
user's token: the consumer checks the API server's certificate against that
CA before sending the token, and trusts nothing else.

` + rightsHelp + `

With --consumer-cluster-id the peering user is bound to that consumer and
its tenant namespace is created now. Without it (the manual's steps) the
user is generic, and the command works for ONE consumer: the first to run
it claims the user with its cluster ID, after which the user may create
that consumer's tenant namespace and bind its rights there, once, and
nothing else (the liqo-peering-users policy enforces it; the cluster must
serve ValidatingAdmissionPolicies, Kubernetes 1.30 or later). The same
command run by another cluster is refused. Running generate peer-command
again without --consumer-cluster-id prints the same command until it is
claimed. A generic command fails for a consumer whose tenant namespace
exists here already (for example, because this cluster peers with it the
other way), since the user may only bind itself in a namespace it created:
use --consumer-cluster-id for that consumer.

The token lives until liqoctl delete peering-user revokes it
(--consumer-cluster-id ID, or --unclaimed for commands nobody ran).`,
		Example: `  liqoctl generate peer-command --kubeconfig ~/.kube/milan
  liqoctl generate peer-command --only-command --consumer-cluster-id rome`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
			defer cancel()
			p := &output.Printer{W: cmd.ErrOrStderr()}
			if err := o.connect(ctx); err != nil {
				return err
			}
			u, err := Ensure(ctx, &o.cluster, EnsureOptions{Consumer: o.consumer, APIServerURL: o.apiServerURL, Timeout: o.timeout, Out: p})
			if err != nil {
				return err
			}
			line := PeerCommand(u)
			out := cmd.OutOrStdout()
			if o.onlyCommand {
				fmt.Fprintln(out, line)
				return nil
			}
			who := "a *different* cluster"
			if u.Consumer != "" {
				who = fmt.Sprintf("the cluster %q", u.Consumer)
			}
			fmt.Fprintf(out, "Execute this command on %s to enable an outgoing peering with the current cluster:\n\n%s\n", who, line)
			return nil
		},
	}
	o.bind(cmd)
	fs := cmd.Flags()
	fs.BoolVar(&o.onlyCommand, "only-command", false, "print the command only, without the explanation")
	fs.StringVar(&o.consumer, "consumer-cluster-id", "", "bind the command to the consumer with this cluster ID (default: the first consumer to run it)")
	fs.StringVar(&o.apiServerURL, "api-server-url", "", "URL at which peers reach this cluster's API server (default: the controller manager's --api-server-url, else the kubeconfig's server)")
	return cmd
}

// PeerCommand is the liqoctl peer out-of-band command line for u.
func PeerCommand(u *User) string {
	return fmt.Sprintf("liqoctl peer out-of-band %s --auth-url %s --cluster-id %s --auth-token %s",
		u.ClusterID, u.ServerURL, u.ClusterID, u.Token.String())
}

func newDeletePeeringUser() *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "peering-user",
		Short: "Revoke a peering user made by generate peering-user or peer-command",
		Long: `Delete the peering users of the consumer --consumer-cluster-id (or, with
--unclaimed, the generic ones no consumer has claimed): their ServiceAccount
and token Secret, so that their kubeconfig or peer command stops working at
once, their claim, Roles, ClusterRoles and bindings.

The consumer's tenant namespace is deleted too, unless a peering lives in it
(a Tenant, Identity or ResourceSlice): then it is kept, and the command says
so; liqoctl unpeer removes it. Deleting a peering user does not unpeer: the
consumer's controllers hold credentials of their own.`,
		Example: `  liqoctl delete peering-user --consumer-cluster-id rome --kubeconfig ~/.kube/milan
  liqoctl delete peering-user --unclaimed`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (o.consumer == "") == !o.unclaimed {
				return errors.New("pass exactly one of --consumer-cluster-id and --unclaimed")
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
			defer cancel()
			if err := o.connect(ctx); err != nil {
				return err
			}
			return Delete(ctx, &o.cluster, DeleteOptions{Consumer: o.consumer, Unclaimed: o.unclaimed, Out: &output.Printer{W: cmd.OutOrStdout()}})
		},
	}
	o.bind(cmd)
	fs := cmd.Flags()
	fs.StringVar(&o.consumer, "consumer-cluster-id", "", "delete the peering users of the consumer with this cluster ID")
	fs.BoolVar(&o.unclaimed, "unclaimed", false, "delete the generic peering users no consumer has claimed")
	return cmd
}
