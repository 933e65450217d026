package liqoctl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/liqo-go/liqo/pkg/liqoctl/compat"
	"github.com/liqo-go/liqo/pkg/liqoctl/completion"
	"github.com/liqo-go/liqo/pkg/liqoctl/dashboard"
	"github.com/liqo-go/liqo/pkg/liqoctl/export"
	"github.com/liqo-go/liqo/pkg/liqoctl/info"
	"github.com/liqo-go/liqo/pkg/liqoctl/install"
	"github.com/liqo-go/liqo/pkg/liqoctl/move"
	"github.com/liqo-go/liqo/pkg/liqoctl/network"
	"github.com/liqo-go/liqo/pkg/liqoctl/offload"
	"github.com/liqo-go/liqo/pkg/liqoctl/peer"
	"github.com/liqo-go/liqo/pkg/liqoctl/peeringuser"
	"github.com/liqo-go/liqo/pkg/liqoctl/playground"
	"github.com/liqo-go/liqo/pkg/liqoctl/tenant"
	"github.com/liqo-go/liqo/pkg/liqoctl/testnet"
	"github.com/liqo-go/liqo/pkg/liqoctl/version"
)

// Name is liqoctl's name when run as itself.
const Name = "liqoctl"

// NewRootCommand returns the liqoctl command tree.
func NewRootCommand() *cobra.Command { return NewRootCommandAs(Name) }

// NewRootCommandAs returns the liqoctl command tree, named name in usage
// lines, help and examples: Name, or "kubectl liqo" when kubectl runs the
// binary as its plugin (ProgramName).
func NewRootCommandAs(name string) *cobra.Command {
	root := &cobra.Command{
		Use:   Name,
		Short: "Manage multi-cluster federation: peering, namespace offloading and a local playground",
		Long: `liqoctl peers Kubernetes clusters, offloads namespaces to remote clusters and
runs a local playground of real Kubernetes control planes with simulated nodes.

Each command reaches the clusters as kubectl does (--kubeconfig, $KUBECONFIG,
--context and the other connection flags), and the remote cluster of a
peering with the same flags prefixed with --remote- (--remote-context names
a context of the same kubeconfig). Installed as kubectl-liqo, the binary is
the kubectl plugin "kubectl liqo".`,
		Example: `  liqoctl playground up
  liqoctl peer --context rome --remote-context milan
  liqoctl offload namespace liqo-demo --context rome
  liqoctl info --context rome`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(playground.NewCommand(), peer.NewCommand(), peer.NewUnpeerCommand(), info.NewCommand(),
		offload.NewCommand(), offload.NewUnoffloadCommand(), network.NewCommand(), testnet.NewCommand(), move.NewCommand())
	root.AddCommand(export.NewCommand(), export.NewUnexportCommand())
	root.AddCommand(tenant.NewCommands()...)
	root.AddCommand(version.NewCommand(), completion.NewCommand(), install.NewCommand(), install.NewUninstallCommand())
	root.AddCommand(dashboard.NewCommand())
	root.AddCommand(peer.NewAuthenticateCommand(), peer.NewUnauthenticateCommand(), peer.NewForceCommand())
	root.AddCommand(
		group("create", "Create Liqo resources: a nonce, a ResourceSlice, a virtual node, the network fabric's objects",
			`Create, one at a time, what liqoctl peer creates: the provider's nonce (the
manual peering's first step), a ResourceSlice asking a provider for
resources, a virtual node standing for a provider; and what liqoctl network
connect creates on each cluster: the Configuration of a peer's CIDRs, a
gateway server or client, a peer gateway's PublicKey.`,
			`  liqoctl create nonce --remote-cluster-id rome --kubeconfig ~/.kube/milan
  liqoctl create resourceslice pool --remote-cluster-id milan --cpu 4 --memory 8Gi
  liqoctl create virtualnode mynode --remote-cluster-id milan --resource-slice-name pool
  liqoctl create gatewayserver --remote-cluster-id rome --service-type NodePort --kubeconfig ~/.kube/milan`,
			append(peer.NewCreateCommands(), network.NewCreateCommands()...)...),
		group("get", "Print what a peering step produced: a nonce, a kubeconfig",
			`Print what a step of the manual peering produced, for the administrator of
the other cluster: the nonce a provider issued for a consumer (on the
provider), the kubeconfig the consumer's components use on a provider (on
the consumer).`,
			`  liqoctl get nonce --remote-cluster-id rome --kubeconfig ~/.kube/milan
  liqoctl get kubeconfig --remote-cluster-id milan --kubeconfig ~/.kube/rome`,
			peer.NewGetCommands()...),
		group("generate", "Generate what the other cluster of a peering applies",
			`Generate, on one cluster, what the administrator of the other applies, for
peerings between administrators who each have access to their own cluster
only: the Tenant (on the consumer) and the Identity (on the provider) of the
manual peering, a peering user's kubeconfig or a ready-made liqoctl peer
out-of-band command (on the provider), and for the manual network fabric
this cluster's Configuration and its gateway's PublicKey.`,
			`  liqoctl generate tenant --remote-cluster-id milan --nonce NONCE > tenant.yaml
  liqoctl generate identity --remote-cluster-id rome > identity.yaml
  liqoctl generate peering-user --consumer-cluster-id rome --output rome-on-milan.kubeconfig
  liqoctl generate configuration > configuration.yaml`,
			slices.Concat(peeringuser.NewGenerateCommands(), peer.NewGenerateCommands(), network.NewGenerateCommands())...),
		group("delete", "Delete Liqo resources: a ResourceSlice, a virtual node, a peering user, the network fabric's objects",
			`Delete, one at a time, what liqoctl create and liqoctl generate
peering-user made: a ResourceSlice with its virtual nodes, a virtual node,
the peering users of a consumer, a Configuration, a gateway server or
client, a PublicKey.`,
			`  liqoctl delete resourceslice pool --remote-cluster-id milan
  liqoctl delete virtualnode mynode --remote-cluster-id milan
  liqoctl delete peering-user --consumer-cluster-id rome --kubeconfig ~/.kube/milan
  liqoctl delete gatewayclient milan --kubeconfig ~/.kube/rome`,
			slices.Concat(peer.NewDeleteCommands(), peeringuser.NewDeleteCommands(), network.NewDeleteCommands())...),
	)
	addGlobalFlags(root)
	// completion.NewCommand is the only completion command, with the help on
	// loading the scripts; cobra would otherwise add its own when none exists.
	root.CompletionOptions.DisableDefaultCmd = true
	completion.Register(root)
	markUsageErrors(root)
	if name != Name {
		rename(root, name)
	}
	return root
}

// group is a command that only holds subcommands.
func group(use, short, long, example string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Long: long, Example: example, Args: cobra.NoArgs}
	cmd.AddCommand(subs...)
	return cmd
}

// Exit codes, as kubectl's: 1 for a failure, 2 for a command used wrongly.
const (
	ExitFailure = 1
	ExitUsage   = 2
)

// usageError is a command used wrongly: an unknown flag or command, a bad
// flag value, the wrong number of arguments.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// markUsageErrors makes every command's flag and argument errors usage
// errors, so that Run exits with ExitUsage for them.
func markUsageErrors(c *cobra.Command) {
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	if args := c.Args; args != nil {
		c.Args = func(cmd *cobra.Command, a []string) error {
			if err := args(cmd, a); err != nil {
				return usageError{err}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		markUsageErrors(sub)
	}
}

// Run runs liqoctl with args, printing an error to stderr, and returns the
// process's exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return RunAs(ctx, Name, args, stdout, stderr)
}

// RunAs is Run with the command tree named name (NewRootCommandAs).
func RunAs(ctx context.Context, name string, args []string, stdout, stderr io.Writer) int {
	root := NewRootCommandAs(name)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	// liqo-playground, which liqoctl playground runs, printed its own error.
	var exit playground.ExitStatus
	if errors.As(err, &exit) {
		return int(exit)
	}
	fmt.Fprintln(stderr, "Error:", err)
	if isUsageError(err) {
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", commandPath(root, args))
		return ExitUsage
	}
	return ExitFailure
}

// isUsageError tells whether err is a command used wrongly. cobra reports
// an unknown command from its own lookup, and a missing required flag or
// mutually exclusive flags given together from its own checks, none
// through the flag error function.
func isUsageError(err error) bool {
	var usage usageError
	if errors.As(err, &usage) {
		return true
	}
	for _, prefix := range []string{"unknown command ", "required flag(s) ", "at least one of the flags in the group ", "if any flags in the group "} {
		if strings.HasPrefix(err.Error(), prefix) {
			return true
		}
	}
	return false
}

// commandPath names the command args select, for the usage hint.
func commandPath(root *cobra.Command, args []string) string {
	if c, _, err := root.Find(args); err == nil {
		return c.CommandPath()
	}
	return root.Name()
}

// Execute runs liqoctl in-process with args and returns what it printed
// (output and errors together) and its error: for tests and tools that
// drive liqoctl as a library.
func Execute(ctx context.Context, args ...string) (string, error) {
	cmd := NewRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	return out.String(), err
}

// addGlobalFlags adds the reference's global flags to every command:
// --verbose, which the commands with more to say define themselves (the
// global one, on the others, is accepted and ignored), and --skip-confirm,
// --global-labels and --global-annotations, accepted and ignored. Each
// ignored flag given prints a warning.
func addGlobalFlags(root *cobra.Command) {
	pf := root.PersistentFlags()
	pf.BoolP("verbose", "v", false, "more output, on the commands that have any (install, peer, authenticate, info, network, test network); elsewhere accepted and ignored, with a warning")
	pf.Bool("skip-confirm", false, "accepted for compatibility and ignored, with a warning: liqoctl never asks for confirmation")
	pf.StringToString("global-labels", nil, "accepted for compatibility and ignored, with a warning: liqoctl does not add labels of yours to what it creates")
	pf.StringToString("global-annotations", nil, "accepted for compatibility and ignored, with a warning: liqoctl does not add annotations of yours to what it creates")
	for _, name := range []string{"global-labels", "global-annotations"} {
		pf.Lookup(name).DefValue = ""
	}
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		cmd.Flags().Visit(func(f *pflag.Flag) {
			// A command's own --verbose shadows the global one, which
			// then is not the flag the command parsed.
			if pf.Lookup(f.Name) == f {
				fmt.Fprintf(cmd.ErrOrStderr(), "WARN: --%s is accepted and ignored by %s\n", f.Name, cmd.CommandPath())
			}
		})
		// The reference's flags a command accepts without their meaning.
		if err := compat.Check(cmd.Flags(), cmd.ErrOrStderr(), cmd.CommandPath()); err != nil {
			return usageError{err}
		}
		return nil
	}
}
