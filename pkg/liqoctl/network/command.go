// Package network implements liqoctl network connect, disconnect and
// reset: the network fabric between two clusters, with an admin kubeconfig
// for each. The local cluster runs the gateway client, the remote one the
// gateway server.
package network

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/liqoctl/compat"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
	"github.com/liqo-go/liqo/pkg/peering/netsetup"
)

// Options of the network commands.
type Options struct {
	Local, Remote factory.Cluster
	Timeout       time.Duration
	Verbose       bool

	// The fabric's choices, bound to the connect flags; settings fills
	// in the rest.
	netsetup.Settings
	// ServerLocation is the cluster that runs the gateway server:
	// ServerRemote ("" too) or ServerLocal.
	ServerLocation string
	// connectFlags are the flags AddConnectFlags bound: they tell whether
	// the user chose the Service type or left it to the default.
	connectFlags *pflag.FlagSet

	// Out prints the steps; the commands set it. (It shadows
	// Settings.Out, which settings sets to it.)
	Out *output.Printer
}

// NewCommand returns liqoctl network and its subcommands.
func NewCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "network",
		Short: "Connect, disconnect or reset the network fabric between two clusters",
		Long: `Manage the network fabric between the local cluster and a remote one: a
WireGuard tunnel between a gateway in each cluster, with the remote pod and
external CIDRs remapped wherever they overlap local ones.

liqoctl peer runs "network connect" itself unless --networking-disabled is
given; these commands set up, take down or repair the fabric alone.`,
		Example: `  liqoctl network connect --context rome --remote-context milan
  liqoctl network disconnect --context rome --remote-context milan
  liqoctl network reset --kubeconfig ~/.kube/rome --remote-kubeconfig ~/.kube/milan`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newInit(), newConnect(), newDisconnect(false), newDisconnect(true))
	return cmd
}

func newInit() *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Declare the networks of the local cluster and a remote one to each other, without gateways",
		Long: `Give each of two clusters the other's pod and external CIDRs (a
Configuration in its tenant namespace), remapped where they overlap its own,
and wait until both are configured. No gateway is started: this is the first
half of "network connect".

Use it alone where the clusters' pods already reach each other (a network
the clusters share, connected by other means) and the peering was made with
--networking-disabled: a provider keeps in the EndpointSlices it reflects
only the addresses it knows to be its consumer's, which is none until it
has the consumer's Configuration.`,
		Example: `  liqoctl network init --kubeconfig ~/.kube/rome --remote-kubeconfig ~/.kube/milan
  liqoctl network init --context rome --remote-context milan`,
		Args: cobra.NoArgs,
		RunE: o.runE(o.Init),
	}
	o.addCommon(cmd)
	return cmd
}

// Where the gateway server runs (--gw-server-service-location).
const (
	ServerRemote = "Remote"
	ServerLocal  = "Local"
)

func (o *Options) addCommon(cmd *cobra.Command) {
	fs := cmd.Flags()
	o.Local.AddLocalFlags(fs)
	o.Remote.AddRemoteFlags(fs, &o.Local)
	factory.RequireRemote(cmd)
	AddSkipValidationFlag(fs)
	// Long enough for a cloud load balancer, or the NodePort fallback.
	fs.DurationVar(&o.Timeout, "timeout", 10*time.Minute, "give up after this long")
	fs.BoolVarP(&o.Verbose, "verbose", "v", false, "print how long each step took")
}

func (o *Options) runE(run func(context.Context) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		o.Out = &output.Printer{W: cmd.OutOrStdout(), Verbose: o.Verbose}
		ctx, cancel := context.WithTimeout(cmd.Context(), o.Timeout)
		defer cancel()
		return run(ctx)
	}
}

func newConnect() *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Use:   "connect",
		Short: "Connect the network of the local cluster (gateway client) and a remote one (gateway server)",
		Long: `Connect the networks of two clusters:

 1. the tenant namespaces are ensured on both sides;
 2. each cluster is given the other's pod and external CIDRs (a Configuration)
    and remaps those overlapping its own;
 3. the remote cluster runs a gateway server, exposed by a UDP Service of
    --server-service-type (LoadBalancer by default, NodePort when the cluster
    gives the load balancer no address), and the local cluster a gateway
    client dialling it;
 4. each gateway is given the other's WireGuard public key;
 5. with --wait (the default) the command returns once both ends report the
    tunnel Connected.

Running it again repairs a partial connection and changes nothing on a
complete one.`,
		Example: `  liqoctl network connect --kubeconfig ~/.kube/rome --remote-kubeconfig ~/.kube/milan
  liqoctl network connect --context rome --remote-context milan
  liqoctl network connect --remote-kubeconfig ~/.kube/milan --server-service-type NodePort --server-node-port 31840`,
		Args: cobra.NoArgs,
		RunE: o.runE(o.Connect),
	}
	o.addCommon(cmd)
	o.AddConnectFlags(cmd.Flags())
	return cmd
}

// AddSkipValidationFlag adds the reference's --skip-validation, ignored
// here, to the network commands and liqoctl peer.
func AddSkipValidationFlag(fs *pflag.FlagSet) {
	fs.Bool("skip-validation", false, "")
	compat.Ignore(fs, "skip-validation", "liqoctl checks only what it cannot go on without (the flags, both clusters reachable and running Liqo), "+
		"and a failed check already names what to fix")
}

// The reference's gateway templates, the only ones accepted: the gateways
// here are built in (WireGuard), rendered from no template.
const (
	defaultServerTemplate = "wireguard-server"
	defaultClientTemplate = "wireguard-client"
	defaultServerType     = "networking.liqo.io/v1beta1/wggatewayservertemplates"
	defaultClientType     = "networking.liqo.io/v1beta1/wggatewayclienttemplates"
)

// addTemplateFlags adds the reference's flags choosing a gateway's
// template, named nameFlag, nsFlag and typeFlag: their defaults (def and
// defType), which name the WireGuard gateways built in here, are accepted;
// another template is refused.
func addTemplateFlags(fs *pflag.FlagSet, nameFlag, nsFlag, typeFlag, def, defType string) {
	const why = "the gateways here are WireGuard, built in and rendered from no template: only the reference's default, %s, is accepted"
	fs.String(nameFlag, def, "")
	compat.Refuse(fs, nameFlag, fmt.Sprintf(why, def))
	fs.String(typeFlag, defType, "")
	compat.Refuse(fs, typeFlag, fmt.Sprintf(why, defType))
	fs.String(nsFlag, "", "")
	compat.Ignore(fs, nsFlag, "the gateways here are rendered from no template, so there is no template namespace to look in")
}

// AddConnectFlags binds the flags of network connect, which liqoctl peer
// takes too.
func (o *Options) AddConnectFlags(fs *pflag.FlagSet) {
	o.connectFlags = fs
	fs.StringVar(&o.ServerServiceType, "server-service-type", string(corev1.ServiceTypeLoadBalancer),
		"type of the Service exposing the gateway server: LoadBalancer, NodePort or ClusterIP; left to the default, a LoadBalancer that gets no address within "+
			netsetup.LoadBalancerWait.String()+" (a cluster without a load-balancer implementation, as kind or k3s may be) is replaced by a NodePort")
	fs.Int32Var(&o.ServerPort, "server-port", netv1beta1.DefaultGatewayPort, "UDP port of the gateway server's Service")
	fs.Int32Var(&o.ServerNodePort, "server-node-port", 0, "node port of the gateway server's Service, with --server-service-type NodePort (default: one the cluster picks)")
	fs.StringVar(&o.ServerLoadBalancer, "server-load-balancer-ip", "", "address asked of the load balancer, with --server-service-type LoadBalancer")
	fs.StringVar(&o.ClientAddress, "client-address", "", "address the gateway client dials instead of the one the server publishes (a NAT in between)")
	fs.Int32Var(&o.ClientPort, "client-port", 0, "port the gateway client dials instead of the one the server publishes")
	fs.Int32Var(&o.MTU, "mtu", netv1beta1.DefaultMTU, "MTU of the tunnel; both ends use it")
	fs.BoolVar(&o.Wait, "wait", true, "wait until both gateways report the tunnel Connected")
	fs.BoolVar(&o.DisableSharingKeys, "disable-sharing-keys", false, "do not exchange the gateways' public keys (create the PublicKeys yourself)")
	fs.StringVar(&o.ServerLocation, "gw-server-service-location", ServerRemote,
		"the cluster that runs the gateway server: Remote (the default; the local cluster dials it) or Local (the remote cluster dials the local one, "+
			"which must then be reachable from it; the remote cluster's user must be allowed to create GatewayClients)")
	addTemplateFlags(fs, "gw-server-template-name", "gw-server-template-namespace", "gw-server-type", defaultServerTemplate, defaultServerType)
	addTemplateFlags(fs, "gw-client-template-name", "gw-client-template-namespace", "gw-client-type", defaultClientTemplate, defaultClientType)
	// The reference system's names for the same flags.
	fs.StringVar(&o.ServerServiceType, "gw-server-service-type", string(corev1.ServiceTypeLoadBalancer), "alias of --server-service-type")
	fs.Int32Var(&o.ServerPort, "gw-server-service-port", netv1beta1.DefaultGatewayPort, "alias of --server-port")
	fs.Int32Var(&o.ServerNodePort, "gw-server-service-nodeport", 0, "alias of --server-node-port")
	fs.StringVar(&o.ServerLoadBalancer, "gw-server-service-loadbalancerip", "", "alias of --server-load-balancer-ip")
	fs.StringVar(&o.ClientAddress, "gw-client-address", "", "alias of --client-address")
	fs.Int32Var(&o.ClientPort, "gw-client-port", 0, "alias of --client-port")
	for _, alias := range []string{"gw-server-service-type", "gw-server-service-port", "gw-server-service-nodeport", "gw-server-service-loadbalancerip", "gw-client-address", "gw-client-port"} {
		_ = fs.MarkHidden(alias)
	}
}

func newDisconnect(reset bool) *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Use:   "disconnect",
		Short: "Remove the gateways between the local and a remote cluster, keeping the address mapping",
		Long: `Remove the gateways (server, client and their pods) and the exchanged public
keys on both clusters. The Configurations stay, so a later connect gives the
remote pods the same addresses as before.`,
		Example: `  liqoctl network disconnect --kubeconfig ~/.kube/rome --remote-kubeconfig ~/.kube/milan
  liqoctl network disconnect --context rome --remote-context milan`,
		Args: cobra.NoArgs,
		RunE: o.runE(func(ctx context.Context) error { return o.Disconnect(ctx, false) }),
	}
	cmd.Flags().BoolVar(&o.Wait, "wait", false, "wait until the gateways (and with reset the Configurations) are gone on both clusters")
	if reset {
		cmd.Use, cmd.Short = "reset", "Remove the network fabric between the local and a remote cluster, address mapping included"
		cmd.Long = `Do what disconnect does, then remove the Configurations on both clusters:
the remapped CIDRs are released, and a later connect starts afresh.`
		cmd.Example = `  liqoctl network reset --kubeconfig ~/.kube/rome --remote-kubeconfig ~/.kube/milan
  liqoctl network reset --context rome --remote-context milan`
		cmd.RunE = o.runE(func(ctx context.Context) error { return o.Disconnect(ctx, true) })
	}
	o.addCommon(cmd)
	return cmd
}

// serverServiceTypeChosen tells whether the user gave the Service type (or
// its reference-named alias) rather than leaving it to the default.
func (o *Options) serverServiceTypeChosen() bool {
	return o.connectFlags != nil && (o.connectFlags.Changed("server-service-type") || o.connectFlags.Changed("gw-server-service-type"))
}

func (o *Options) validate() error {
	if err := o.validateServer("--server-service-type", "--server-port", "--server-node-port"); err != nil {
		return err
	}
	if err := checkPort("--client-port", o.ClientPort, true); err != nil {
		return err
	}
	switch o.ServerLocation {
	case "", ServerRemote, ServerLocal:
	default:
		return fmt.Errorf("--gw-server-service-location must be %s or %s, not %q", ServerRemote, ServerLocal, o.ServerLocation)
	}
	return checkMTU(o.MTU)
}

// validateServer checks the gateway server's flags, named as the command
// names them.
func (o *Options) validateServer(typeFlag, portFlag, nodePortFlag string) error {
	switch corev1.ServiceType(o.ServerServiceType) {
	case corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeNodePort, corev1.ServiceTypeClusterIP:
	default:
		return fmt.Errorf("%s must be LoadBalancer, NodePort or ClusterIP, not %q", typeFlag, o.ServerServiceType)
	}
	if err := checkPort(portFlag, o.ServerPort, false); err != nil {
		return err
	}
	if err := checkPort(nodePortFlag, o.ServerNodePort, true); err != nil {
		return err
	}
	return checkMTU(o.MTU)
}

// checkPort checks a port flag's value; zeroOK when 0 means "unset".
func checkPort(flag string, v int32, zeroOK bool) error {
	if v < 0 || v > 65535 || (v == 0 && !zeroOK) {
		return fmt.Errorf("%s must be a port number, not %d", flag, v)
	}
	return nil
}

func checkMTU(mtu int32) error {
	if mtu < 576 || mtu > 9000 {
		return fmt.Errorf("--mtu must be between 576 and 9000, not %d", mtu)
	}
	return nil
}
