package network

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
	"github.com/liqo-go/liqo/pkg/peering"
	"github.com/liqo-go/liqo/pkg/peering/netsetup"
	"github.com/liqo-go/liqo/pkg/wait"
)

// The manual network fabric: each administrator makes, on their own
// cluster, the objects liqoctl network connect makes on both, and hands
// the other what their cluster produced.
//
//	each:   liqoctl generate configuration > conf.yaml    (the other applies it)
//	server: liqoctl create gatewayserver --remote-cluster-id CLIENT    -> ADDRESS PORT
//	client: liqoctl create gatewayclient --remote-cluster-id SERVER --addresses ADDRESS --port PORT
//	each:   liqoctl generate publickey --remote-cluster-id PEER > key.yaml  (the other applies it)

// manual is what the manual network commands share: the cluster they run
// on, the peer (--remote-cluster-id), a timeout, -o and --wait.
type manual struct {
	cluster  factory.Cluster
	remoteID string
	timeout  time.Duration
	wait     bool
	print    *output.Flags
}

// bind binds the flags; printDefault is -o's format without the flag ("":
// the command creates the object unless -o is given); withPeer adds
// --remote-cluster-id.
func (m *manual) bind(cmd *cobra.Command, printDefault, printWhat string, withPeer, withWait bool) {
	fs := cmd.Flags()
	m.cluster.AddPeerFlags(fs)
	if withPeer {
		fs.StringVar(&m.remoteID, "remote-cluster-id", "", "cluster ID of the peer")
	}
	fs.DurationVar(&m.timeout, "timeout", 5*time.Minute, "give up after this long")
	if withWait {
		fs.BoolVar(&m.wait, "wait", true, "wait until the object is processed (with -o, nothing is created and nothing waited for)")
	}
	m.print = output.NewObjectFlags(printDefault)
	m.print.AddFlags(cmd, printWhat)
}

// runE runs f with the cluster connected, under the timeout, once the
// flags are checked; s is this cluster's side, its ns the peer's tenant
// namespace when --remote-cluster-id is given.
func (m *manual) runE(f func(ctx context.Context, cmd *cobra.Command, args []string, s *netsetup.Side) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		id, err := m.cluster.PeerID(m.remoteID)
		if err != nil {
			return err
		}
		m.remoteID = id
		if m.remoteID != "" {
			if err := consts.ValidateClusterID(m.remoteID); err != nil {
				return fmt.Errorf("--remote-cluster-id: %w", err)
			}
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), m.timeout)
		defer cancel()
		if err := m.cluster.Connect(ctx, min(m.timeout, 10*time.Second)); err != nil {
			return err
		}
		local, err := m.cluster.FindComponents(ctx)
		if err != nil {
			return err
		}
		if local.ID == m.remoteID {
			return fmt.Errorf("--remote-cluster-id %q is this cluster's own ID: give the ID of the other cluster", m.remoteID)
		}
		s := &netsetup.Side{Client: m.cluster.Client, Role: m.cluster.Role, Namespace: m.cluster.Namespace, ID: local.ID}
		if m.remoteID != "" {
			s.NS = consts.TenantNamespace(m.remoteID)
		}
		return f(ctx, cmd, args, s)
	}
}

// name is the object's name: NAME if given, else the peer's ID, as
// network connect names them (what disconnect, reset and unpeer delete).
func (m *manual) name(args []string) string {
	if len(args) == 1 {
		return args[0]
	}
	return m.remoteID
}

// create prints obj with -o, else ensures the peer's tenant namespace and
// creates or updates obj there as forge makes it.
func (m *manual) create(ctx context.Context, cmd *cobra.Command, s *netsetup.Side, obj client.Object, forge func()) error {
	if m.print.Requested() {
		forge()
		return m.print.PrintObject(cmd.OutOrStdout(), obj)
	}
	if err := peering.EnsureTenantNamespace(ctx, s.Client, s.NS, m.remoteID); err != nil {
		return fmt.Errorf("tenant namespace %s: %w", s.NS, err)
	}
	if err := netsetup.Apply(ctx, s, obj, forge); err != nil {
		return err
	}
	(&output.Printer{W: cmd.OutOrStdout()}).Info("%s %s/%s in place", netsetup.KindOf(obj), obj.GetNamespace(), obj.GetName())
	return nil
}

// NewCreateCommands returns the subcommands of liqoctl create making the
// network fabric's objects one at a time.
func NewCreateCommands() []*cobra.Command {
	return []*cobra.Command{newCreateConfiguration(), newCreateGatewayServer(), newCreateGatewayClient(), newCreatePublicKey()}
}

// NewGenerateCommands returns the subcommands of liqoctl generate printing
// what the other cluster applies for the manual network fabric.
func NewGenerateCommands() []*cobra.Command {
	return []*cobra.Command{newGenerateConfiguration(), newGeneratePublicKey()}
}

// parseCIDR reads a CIDR flag, in its canonical form.
func parseCIDR(flag, v string) (netv1beta1.CIDR, error) {
	p, err := netip.ParsePrefix(v)
	if err != nil {
		return "", fmt.Errorf("--%s %q is not a CIDR: %w", flag, v, err)
	}
	if p.Masked() != p {
		return "", fmt.Errorf("--%s %q has host bits set: give %s", flag, v, p.Masked())
	}
	return netv1beta1.CIDR(p.String()), nil
}

func newCreateConfiguration() *cobra.Command {
	m := &manual{}
	var pod, external string
	cmd := &cobra.Command{
		Use:   "configuration [NAME]",
		Short: "Give this cluster a peer's pod and external CIDRs (manual network fabric)",
		Long: `Create, on this cluster, the Configuration holding a peer's pod and external
CIDRs, in the peer's tenant namespace (made if missing): this cluster's IPAM
remaps them where they overlap its own networks, and with --wait (the
default) the command returns once it has, printing where this cluster
reaches the peer's pods. The peer's administrator prints the CIDRs with
liqoctl generate configuration, whose output can also be applied as it is.

NAME defaults to the peer's cluster ID, the name liqoctl network connect
gives it and the one network reset and unpeer delete. With --output the
Configuration is printed instead of created.`,
		Example: `  liqoctl create configuration --remote-cluster-id milan --pod-cidr 10.244.0.0/16 --external-cidr 10.70.0.0/16`,
		Args:    cobra.MaximumNArgs(1),
	}
	m.bind(cmd, "", "print the Configuration instead of creating it", true, true)
	fs := cmd.Flags()
	fs.StringVar(&pod, "pod-cidr", "", "the peer's pod CIDR, as it sees it")
	fs.StringVar(&external, "external-cidr", "", "the peer's external CIDR, as it sees it")
	for _, f := range []string{"remote-cluster-id", "pod-cidr", "external-cidr"} {
		_ = cmd.MarkFlagRequired(f)
	}
	cmd.RunE = m.runE(func(ctx context.Context, cmd *cobra.Command, args []string, s *netsetup.Side) error {
		var cidr netv1beta1.ClusterConfigCIDR
		for _, f := range []struct {
			flag, v string
			into    *[]netv1beta1.CIDR
		}{{"pod-cidr", pod, &cidr.Pod}, {"external-cidr", external, &cidr.External}} {
			c, err := parseCIDR(f.flag, f.v)
			if err != nil {
				return err
			}
			*f.into = []netv1beta1.CIDR{c}
		}
		name := m.name(args)
		cfg := &netv1beta1.Configuration{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.NS}}
		if err := m.create(ctx, cmd, s, cfg, func() { netsetup.ForgeConfiguration(cfg, m.remoteID, cidr) }); err != nil || m.print.Requested() || !m.wait {
			return err
		}
		got, err := netsetup.WaitConfigured(ctx, s, name)
		if err != nil {
			return err
		}
		(&output.Printer{W: cmd.OutOrStdout()}).Info("This cluster reaches %s's pods at %v and its external CIDR at %v",
			m.remoteID, got.Status.Remote.CIDR.Pod, got.Status.Remote.CIDR.External)
		return nil
	})
	return cmd
}

func newGenerateConfiguration() *cobra.Command {
	m := &manual{}
	cmd := &cobra.Command{
		Use:   "configuration",
		Short: "Print this cluster's network Configuration for a peer to apply (manual network fabric)",
		Long: `Print the Configuration a peer's administrator applies (kubectl apply -f) to
give that cluster this cluster's pod and external CIDRs, as this cluster's
controller manager publishes them: the same as liqoctl create configuration
run there with this cluster's ID and CIDRs. It goes to this cluster's tenant
namespace there, liqo-tenant-<this cluster's ID>, which must exist (liqoctl
create nonce, or any peering step, makes it).`,
		Example: `  liqoctl generate configuration --kubeconfig ~/.kube/rome > rome-configuration.yaml
  kubectl apply -f rome-configuration.yaml --kubeconfig ~/.kube/milan`,
		Args: cobra.NoArgs,
	}
	m.bind(cmd, "yaml", "print the Configuration", false, false)
	cmd.RunE = m.runE(func(ctx context.Context, cmd *cobra.Command, _ []string, s *netsetup.Side) error {
		if err := netsetup.LocalCIDRs(ctx, s); err != nil {
			return err
		}
		cfg := &netv1beta1.Configuration{ObjectMeta: metav1.ObjectMeta{Name: s.ID, Namespace: consts.TenantNamespace(s.ID)}}
		netsetup.ForgeConfiguration(cfg, s.ID, s.CIDR)
		return m.print.PrintObject(cmd.OutOrStdout(), cfg)
	})
	return cmd
}

func newCreateGatewayServer() *cobra.Command {
	m := &manual{}
	o := &Options{}
	cmd := &cobra.Command{
		Use:   "gatewayserver [NAME]",
		Short: "Run a gateway server for a peer to dial (manual network fabric)",
		Long: `Create, on this cluster, the GatewayServer a peer's gateway client dials: a
WireGuard gateway exposed by a UDP Service of --service-type. With --wait
(the default) the command returns once the server is ready and prints the
address and port the peer's administrator gives liqoctl create
gatewayclient. Neither end carries packets until each has the other's
public key (liqoctl generate publickey, then apply it on the other side).

NAME defaults to the peer's cluster ID, the name liqoctl network connect
gives it and the one network disconnect and unpeer delete. With --output the
GatewayServer is printed instead of created.`,
		Example: `  liqoctl create gatewayserver --remote-cluster-id rome --service-type NodePort --kubeconfig ~/.kube/milan`,
		Args:    cobra.MaximumNArgs(1),
	}
	m.bind(cmd, "", "print the GatewayServer instead of creating it", true, true)
	fs := cmd.Flags()
	fs.StringVar(&o.ServerServiceType, "service-type", string(corev1.ServiceTypeLoadBalancer), "type of the Service exposing the server: LoadBalancer, NodePort or ClusterIP")
	fs.Int32Var(&o.ServerPort, "port", netv1beta1.DefaultGatewayPort, "UDP port of the Service")
	fs.Int32Var(&o.ServerNodePort, "node-port", 0, "node port of the Service, with --service-type NodePort (default: one the cluster picks)")
	fs.StringVar(&o.ServerLoadBalancer, "load-balancer-ip", "", "address asked of the load balancer, with --service-type LoadBalancer")
	fs.Int32Var(&o.MTU, "mtu", netv1beta1.DefaultMTU, "MTU of the tunnel; the client must use the same")
	addTemplateFlags(fs, "template-name", "template-namespace", "type", defaultServerTemplate, defaultServerType)
	_ = cmd.MarkFlagRequired("remote-cluster-id")
	cmd.RunE = m.runE(func(ctx context.Context, cmd *cobra.Command, args []string, s *netsetup.Side) error {
		if err := o.validateServer("--service-type", "--port", "--node-port"); err != nil {
			return err
		}
		gws := &netv1beta1.GatewayServer{ObjectMeta: metav1.ObjectMeta{Name: m.name(args), Namespace: s.NS}}
		if err := m.create(ctx, cmd, s, gws, func() { o.settings().ForgeServer(gws, m.remoteID, corev1.ServiceType(o.ServerServiceType)) }); err != nil || m.print.Requested() || !m.wait {
			return err
		}
		if err := wait.For(ctx, s.Client, client.ObjectKeyFromObject(gws), gws, "the gateway server to be ready", netsetup.ServerReady); err != nil {
			return err
		}
		ep := gws.Status.Endpoint
		(&output.Printer{W: cmd.OutOrStdout()}).Info("Gateway server ready at %v port %d: on %s, liqoctl create gatewayclient --remote-cluster-id %s --addresses %s --port %d",
			ep.Addresses, ep.Port, m.remoteID, s.ID, joinAddresses(ep.Addresses), ep.Port)
		return nil
	})
	return cmd
}

func joinAddresses(as []netv1beta1.Address) string {
	out := make([]string, 0, len(as))
	for _, a := range as {
		out = append(out, string(a))
	}
	return strings.Join(out, ",")
}

func newCreateGatewayClient() *cobra.Command {
	m := &manual{}
	var addresses []string
	var port, mtu int32
	var protocol string
	cmd := &cobra.Command{
		Use:   "gatewayclient [NAME]",
		Short: "Run a gateway client dialling a peer's gateway server (manual network fabric)",
		Long: `Create, on this cluster, the GatewayClient that dials a peer's gateway
server at --addresses and --port (what liqoctl create gatewayserver printed
there). With --wait (the default) the command returns once the client is
ready. Neither end carries packets until each has the other's public key
(liqoctl generate publickey, then apply it on the other side).

NAME defaults to the peer's cluster ID, the name liqoctl network connect
gives it and the one network disconnect and unpeer delete. With --output the
GatewayClient is printed instead of created.`,
		Example: `  liqoctl create gatewayclient --remote-cluster-id milan --addresses 203.0.113.7 --port 31840 --kubeconfig ~/.kube/rome`,
		Args:    cobra.MaximumNArgs(1),
	}
	m.bind(cmd, "", "print the GatewayClient instead of creating it", true, true)
	fs := cmd.Flags()
	fs.StringSliceVar(&addresses, "addresses", nil, "addresses of the peer's gateway server (comma-separated or repeated)")
	fs.Int32Var(&port, "port", 0, "port of the peer's gateway server")
	fs.StringVar(&protocol, "protocol", string(corev1.ProtocolUDP), "protocol of the peer's gateway server: UDP (WireGuard)")
	fs.Int32Var(&mtu, "mtu", netv1beta1.DefaultMTU, "MTU of the tunnel; the server must use the same")
	addTemplateFlags(fs, "template-name", "template-namespace", "type", defaultClientTemplate, defaultClientType)
	for _, f := range []string{"remote-cluster-id", "addresses", "port"} {
		_ = cmd.MarkFlagRequired(f)
	}
	cmd.RunE = m.runE(func(ctx context.Context, cmd *cobra.Command, args []string, s *netsetup.Side) error {
		if err := checkPort("--port", port, false); err != nil {
			return err
		}
		if err := checkMTU(mtu); err != nil {
			return err
		}
		if corev1.Protocol(protocol) != corev1.ProtocolUDP {
			return fmt.Errorf("--protocol %q: the gateways here are WireGuard, which runs over UDP only", protocol)
		}
		ep := netv1beta1.EndpointStatus{Port: port, Protocol: ptr.To(corev1.ProtocolUDP)}
		for _, a := range addresses {
			ep.Addresses = append(ep.Addresses, netv1beta1.Address(a))
		}
		gwc := &netv1beta1.GatewayClient{ObjectMeta: metav1.ObjectMeta{Name: m.name(args), Namespace: s.NS}}
		if err := m.create(ctx, cmd, s, gwc, func() { netsetup.ForgeClient(gwc, m.remoteID, mtu, ep) }); err != nil || m.print.Requested() || !m.wait {
			return err
		}
		if err := wait.For(ctx, s.Client, client.ObjectKeyFromObject(gwc), gwc, "the gateway client to be ready", netsetup.ClientReady); err != nil {
			return err
		}
		(&output.Printer{W: cmd.OutOrStdout()}).Info("Gateway client ready")
		return nil
	})
	return cmd
}

func newCreatePublicKey() *cobra.Command {
	m := &manual{}
	var key []byte
	cmd := &cobra.Command{
		Use:   "publickey [NAME]",
		Short: "Give this cluster's gateway a peer gateway's public key (manual network fabric)",
		Long: `Create, on this cluster, the PublicKey holding the WireGuard public key of a
peer's gateway (base64, the 44 characters wg pubkey prints), in the peer's
tenant namespace (made if missing): this cluster's gateway for that peer
accepts the tunnel from that key only. liqoctl generate publickey prints, on
the peer, a PublicKey manifest to apply here instead.

NAME defaults to the peer's cluster ID, the name liqoctl network connect
gives it and the one network disconnect and unpeer delete. With --output the
PublicKey is printed instead of created.`,
		Example: `  liqoctl create publickey --remote-cluster-id milan --public-key 7+5hRCDFfd0qjpHu729rg9U1bCKIFVvg8nO++YbjuFA=`,
		Args:    cobra.MaximumNArgs(1),
	}
	m.bind(cmd, "", "print the PublicKey instead of creating it", true, false)
	cmd.Flags().BytesBase64Var(&key, "public-key", nil, "the peer gateway's WireGuard public key, in base64")
	for _, f := range []string{"remote-cluster-id", "public-key"} {
		_ = cmd.MarkFlagRequired(f)
	}
	cmd.RunE = m.runE(func(ctx context.Context, cmd *cobra.Command, args []string, s *netsetup.Side) error {
		if len(key) != netv1beta1.PublicKeyLength {
			return fmt.Errorf("--public-key holds %d bytes, a WireGuard public key %d", len(key), netv1beta1.PublicKeyLength)
		}
		pk := &netv1beta1.PublicKey{ObjectMeta: metav1.ObjectMeta{Name: m.name(args), Namespace: s.NS}}
		return m.create(ctx, cmd, s, pk, func() { netsetup.ForgePublicKey(pk, m.remoteID, key) })
	})
	return cmd
}

func newGeneratePublicKey() *cobra.Command {
	m := &manual{}
	var gatewayName, gatewayType string
	cmd := &cobra.Command{
		Use:   "publickey",
		Short: "Print the public key of this cluster's gateway as a PublicKey for the peer (manual network fabric)",
		Long: `Print the PublicKey a peer's administrator applies (kubectl apply -f) so that
the peer's gateway accepts this cluster's: the WireGuard public key of this
cluster's gateway server or client (--gateway-type) for that peer. It goes
to this cluster's tenant namespace there, liqo-tenant-<this cluster's ID>.

The gateway is --gateway-name in the tenant namespace of
--remote-cluster-id; with only one of the two flags, the name defaults to
the peer's ID (as liqoctl create gatewayserver and gatewayclient name
them), or the gateway of that name is looked for in every tenant namespace.`,
		Example: `  liqoctl generate publickey --gateway-type server --remote-cluster-id rome --kubeconfig ~/.kube/milan > milan-key.yaml
  kubectl apply -f milan-key.yaml --kubeconfig ~/.kube/rome`,
		Args: cobra.NoArgs,
	}
	m.bind(cmd, "yaml", "print the PublicKey", true, false)
	fs := cmd.Flags()
	fs.StringVar(&gatewayName, "gateway-name", "", "name of this cluster's gateway (default: --remote-cluster-id)")
	fs.StringVar(&gatewayType, "gateway-type", "", "type of this cluster's gateway: server or client")
	_ = cmd.MarkFlagRequired("gateway-type")
	cmd.MarkFlagsOneRequired("gateway-name", "remote-cluster-id")
	cmd.RunE = m.runE(func(ctx context.Context, cmd *cobra.Command, _ []string, s *netsetup.Side) error {
		k, ok := gatewayKinds[gatewayType]
		if !ok {
			return fmt.Errorf("--gateway-type must be server or client, not %q", gatewayType)
		}
		name := gatewayName
		if name == "" {
			name = m.remoteID
		}
		gw, err := find(ctx, s.Client, k, name, m.remoteID)
		if err != nil {
			return err
		}
		ref := k.secretRef(gw)
		key, err := netsetup.PublicKey(ctx, &netsetup.Side{Client: s.Client, Role: s.Role, NS: gw.GetNamespace()}, ref)
		if err != nil {
			return err
		}
		pk := &netv1beta1.PublicKey{ObjectMeta: metav1.ObjectMeta{Name: s.ID, Namespace: consts.TenantNamespace(s.ID)}}
		netsetup.ForgePublicKey(pk, s.ID, key)
		return m.print.PrintObject(cmd.OutOrStdout(), pk)
	})
	return cmd
}
