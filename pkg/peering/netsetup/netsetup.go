package netsetup

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1alpha1 "github.com/liqo-go/liqo/apis/ipam/v1alpha1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/peering"
	"github.com/liqo-go/liqo/pkg/wait"
)

// Side is one cluster of the fabric.
type Side struct {
	Client client.Client
	// Role names the cluster in messages: "local", "remote", "consumer"...
	Role string
	// Namespace is where Liqo runs, with the Networks of its own CIDRs.
	Namespace string
	// ID is the cluster's ID.
	ID string
	// NS is the tenant namespace of the other cluster, where this side's
	// objects for it live.
	NS string
	// CIDR is the cluster's pod and external CIDRs (LocalCIDRs reads them).
	CIDR netv1beta1.ClusterConfigCIDR
}

// Pair makes the two sides of a fabric, each with the other's tenant
// namespace.
func Pair(local, remote Side) (*Side, *Side) {
	local.NS, remote.NS = consts.TenantNamespace(remote.ID), consts.TenantNamespace(local.ID)
	return &local, &remote
}

// Settings are the choices the fabric is made with, and how to go about it.
type Settings struct {
	peering.FabricOptions
	// Wait for the tunnel to connect (Connect) or the objects to go
	// (Disconnect).
	Wait bool
	// ServerLocal runs the gateway server on the local side.
	ServerLocal bool
	Out         peering.Progress
}

// Connect sets up the fabric between local and remote, reporting each
// step: the Configurations, the gateways, their keys.
func Connect(ctx context.Context, o Settings, local, remote *Side) error {
	steps := o.initSteps()
	client, server := local, remote
	if o.ServerLocal {
		client, server = remote, local
	}
	reverse, err := reversed(ctx, client, server)
	if err != nil {
		return err
	}
	if reverse {
		// The clusters are connected the other way already (the server's
		// cluster dials the client's): one fabric serves both peerings, a
		// second pair of gateways would claim the same routes.
		o.Out.Info("The clusters are already connected the other way: reusing that tunnel")
		client, server = server, client
	} else {
		// The gateway steps take the client's side first, wherever it is.
		between := func(do func(context.Context, *Side, *Side) error) func(context.Context, *Side, *Side) error {
			return func(ctx context.Context, _, _ *Side) error { return do(ctx, client, server) }
		}
		steps = append(steps, step{"Gateway server ready", between(o.ensureServer)}, step{"Gateway client ready", between(o.ensureClient)})
		if !o.DisableSharingKeys {
			steps = append(steps, step{"Public keys exchanged", between(o.exchangeKeys)})
		}
	}
	if o.Wait {
		steps = append(steps, step{"Tunnel connected on both sides", func(ctx context.Context, _, _ *Side) error {
			return o.waitConnected(ctx, client, server)
		}})
	}
	return o.run(ctx, local, remote, steps)
}

// step is one stage of setting up the fabric, between the two sides.
type step struct {
	what string
	do   func(context.Context, *Side, *Side) error
}

// initSteps declare each cluster's networks to the other: what network
// init does, and connect first.
func (o Settings) initSteps() []step {
	return []step{
		{"Tenant namespaces ensured", o.ensureNamespaces},
		{"Network configurations exchanged and remapped", o.ensureConfigurations},
	}
}

// Init declares each cluster's pod and external CIDRs to the other (the
// Configurations, remapped where they overlap) without any gateway: for
// clusters whose pods already reach each other (a network they share),
// so that each side knows which addresses are its peer's, and a provider
// keeps its consumer's endpoints in the EndpointSlices it reflects.
func Init(ctx context.Context, o Settings, local, remote *Side) error {
	return o.run(ctx, local, remote, o.initSteps())
}

func (o Settings) run(ctx context.Context, local, remote *Side, steps []step) error {
	for _, s := range steps {
		start := time.Now()
		if err := s.do(ctx, local, remote); err != nil {
			return err
		}
		o.Out.Timed(start, "%s", s.what)
	}
	return nil
}

// reversed tells whether the cluster meant to run the server already runs
// the client of a tunnel whose server is the one meant to run the client.
func reversed(ctx context.Context, local, remote *Side) (bool, error) {
	var gws netv1beta1.GatewayServer
	err := local.Client.Get(ctx, types.NamespacedName{Namespace: local.NS, Name: remote.ID}, &gws)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("looking for a gateway server for %q in the %s cluster: %w", remote.ID, local.Role, err)
	}
	var gwc netv1beta1.GatewayClient
	err = remote.Client.Get(ctx, types.NamespacedName{Namespace: remote.NS, Name: local.ID}, &gwc)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

func (o Settings) ensureNamespaces(ctx context.Context, local, remote *Side) error {
	for _, s := range []*Side{local, remote} {
		other := remote
		if s == remote {
			other = local
		}
		if err := peering.EnsureTenantNamespace(ctx, s.Client, s.NS, other.ID); err != nil {
			return fmt.Errorf("%s tenant namespace %s: %w", s.Role, s.NS, err)
		}
	}
	return nil
}

// LocalCIDRs reads a cluster's pod and external CIDRs from the Networks
// its controller manager publishes.
func LocalCIDRs(ctx context.Context, s *Side) error {
	for _, n := range []struct {
		name string
		into *[]netv1beta1.CIDR
	}{{"pod-cidr", &s.CIDR.Pod}, {ipamv1alpha1.ExternalNetworkName, &s.CIDR.External}} {
		// A manager that just took its lease publishes them a moment
		// later: wait a little before concluding they are missing.
		var net ipamv1alpha1.Network
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := wait.For(wctx, s.Client, types.NamespacedName{Namespace: s.Namespace, Name: n.name}, &net, n.name, func(*ipamv1alpha1.Network) error { return nil })
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			return fmt.Errorf("the %s cluster %q publishes no %s Network in namespace %s (%v): start its controller manager with --pod-cidr", s.Role, s.ID, n.name, s.Namespace, err)
		}
		*n.into = []netv1beta1.CIDR{net.Spec.CIDR}
	}
	return nil
}

// ensureConfigurations gives each cluster the other's CIDRs and waits for
// both IPAMs to remap them.
func (o Settings) ensureConfigurations(ctx context.Context, local, remote *Side) error {
	for _, s := range []*Side{local, remote} {
		if err := LocalCIDRs(ctx, s); err != nil {
			return err
		}
	}
	for _, s := range []*Side{local, remote} {
		other := remote
		if s == remote {
			other = local
		}
		cfg := &netv1beta1.Configuration{ObjectMeta: metav1.ObjectMeta{Name: other.ID, Namespace: s.NS}}
		if err := Apply(ctx, s, cfg, func() { ForgeConfiguration(cfg, other.ID, other.CIDR) }); err != nil {
			return err
		}
	}
	for _, s := range []*Side{local, remote} {
		cfg, err := WaitConfigured(ctx, s, otherID(s, local, remote))
		if err != nil {
			return err
		}
		o.Out.Info("The %s cluster reaches %q's pods at %v", s.Role, otherID(s, local, remote), cfg.Status.Remote.CIDR.Pod)
	}
	return nil
}

// Apply creates or updates obj on s's cluster as forge makes it.
func Apply(ctx context.Context, s *Side, obj client.Object, forge func()) error {
	if _, err := peering.Apply(ctx, s.Client, obj, func() error { forge(); return nil }); err != nil {
		return fmt.Errorf("the %s cluster's %s %s/%s: %w", s.Role, KindOf(obj), obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// KindOf names obj's kind for messages.
func KindOf(obj client.Object) string {
	return strings.TrimPrefix(fmt.Sprintf("%T", obj), "*v1beta1.")
}

// ForgeConfiguration makes cfg give its cluster the CIDRs of peer.
func ForgeConfiguration(cfg *netv1beta1.Configuration, peer string, cidr netv1beta1.ClusterConfigCIDR) {
	labels(&cfg.ObjectMeta, peer)
	cfg.Spec.Remote = netv1beta1.ClusterConfig{CIDR: cidr}
}

// WaitConfigured waits until s's IPAM remapped the CIDRs of the
// Configuration name in s's tenant namespace, and returns it.
func WaitConfigured(ctx context.Context, s *Side, name string) (*netv1beta1.Configuration, error) {
	cfg := &netv1beta1.Configuration{}
	key := types.NamespacedName{Namespace: s.NS, Name: name}
	err := wait.For(ctx, s.Client, key, cfg, "the "+s.Role+" cluster's Configuration to be remapped", func(c *netv1beta1.Configuration) error {
		cond := meta.FindStatusCondition(c.Status.Conditions, netv1beta1.NetworkCIDRsConfiguredCondition)
		switch {
		case cond == nil || cond.ObservedGeneration != c.Generation:
			return wait.NotYet("no NetworkCIDRsConfigured condition for the current spec")
		case cond.Status == metav1.ConditionTrue:
			return nil
		case cond.Reason == netv1beta1.ConfigurationReasonWaiting:
			return wait.NotYet("%s", cond.Message)
		}
		return fmt.Errorf("the %s cluster cannot remap the peer's CIDRs: %s (%s)", s.Role, cond.Message, cond.Reason)
	})
	return cfg, err
}

func otherID(s, local, remote *Side) string {
	if s == local {
		return remote.ID
	}
	return local.ID
}

func labels(m *metav1.ObjectMeta, remoteID string) {
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	m.Labels[consts.RemoteClusterIDLabel] = remoteID
}

// LoadBalancerWait is how long a default LoadBalancer Service of the
// gateway server may go without an address before it is replaced by a
// NodePort: long enough for a cloud's load balancer to be provisioned
// (usually well under a minute), short enough not to stall a peering on a
// cluster that has no implementation at all.
const LoadBalancerWait = 90 * time.Second

// ensureServer has the server's cluster (remote: the other side of the
// client's, local) run the gateway server and waits for its endpoint. The Service type defaults to LoadBalancer; where the user
// did not choose it, a load balancer that gives no address in
// LoadBalancerWait is taken for a missing implementation and the server is
// exposed by a NodePort instead, saying so.
func (o Settings) ensureServer(ctx context.Context, local, remote *Side) error {
	gws := &netv1beta1.GatewayServer{ObjectMeta: metav1.ObjectMeta{Name: local.ID, Namespace: remote.NS}}
	typ := corev1.ServiceType(o.ServerServiceType)
	if err := remote.Client.Get(ctx, client.ObjectKeyFromObject(gws), gws); err == nil && !o.ServiceTypeChosen && gws.Spec.Endpoint.ServiceType != "" {
		// Running again keeps what an earlier run settled on.
		typ = gws.Spec.Endpoint.ServiceType
	}
	if err := o.applyServer(ctx, remote, local.ID, gws, typ); err != nil {
		return err
	}
	what := "the " + remote.Role + " gateway server to be ready"
	ready := ServerReady
	if typ != corev1.ServiceTypeLoadBalancer || o.ServiceTypeChosen {
		return wait.For(ctx, remote.Client, client.ObjectKeyFromObject(gws), gws, what, ready)
	}
	lbCtx, cancel := context.WithTimeout(ctx, LoadBalancerWait)
	err := wait.For(lbCtx, remote.Client, client.ObjectKeyFromObject(gws), gws, what, ready)
	cancel()
	if err == nil || ctx.Err() != nil || !waitingForLoadBalancer(gws) {
		return err
	}
	o.Out.Info("The %s cluster gave the gateway server's LoadBalancer Service no address in %s (no load-balancer implementation, as on kind or k3s?): "+
		"exposing it as a NodePort instead (--server-service-type chooses)", remote.Role, LoadBalancerWait)
	if err := o.applyServer(ctx, remote, local.ID, gws, corev1.ServiceTypeNodePort); err != nil {
		return err
	}
	return wait.For(ctx, remote.Client, client.ObjectKeyFromObject(gws), gws, what, ready)
}

// ServerReady tells whether a gateway server is ready, with the endpoint
// its clients dial.
func ServerReady(g *netv1beta1.GatewayServer) error {
	return gatewayReady(g.Status.Conditions, g.Generation, g.Status.Endpoint != nil && len(g.Status.Endpoint.Addresses) > 0 && g.Status.SecretRef != nil)
}

// applyServer creates or updates, on the server's cluster (remote), the
// GatewayServer for the cluster localID, exposed by a Service of type typ.
func (o Settings) applyServer(ctx context.Context, remote *Side, localID string, gws *netv1beta1.GatewayServer, typ corev1.ServiceType) error {
	return Apply(ctx, remote, gws, func() { o.ForgeServer(gws, localID, typ) })
}

// ForgeServer makes gws the gateway server for peer the flags describe,
// exposed by a Service of type typ.
func (o Settings) ForgeServer(gws *netv1beta1.GatewayServer, peer string, typ corev1.ServiceType) {
	labels(&gws.ObjectMeta, peer)
	gws.Spec.MTU = o.MTU
	gws.Spec.Endpoint = netv1beta1.Endpoint{Port: o.ServerPort, ServiceType: typ}
	if o.ServerNodePort != 0 {
		gws.Spec.Endpoint.NodePort = &o.ServerNodePort
	}
	if o.ServerLoadBalancer != "" && typ == corev1.ServiceTypeLoadBalancer {
		gws.Spec.Endpoint.LoadBalancerIP = &o.ServerLoadBalancer
	}
}

// waitingForLoadBalancer tells whether the gateway server is held up only
// by its LoadBalancer Service's missing address (its pod runs).
func waitingForLoadBalancer(g *netv1beta1.GatewayServer) bool {
	c := meta.FindStatusCondition(g.Status.Conditions, netv1beta1.ReadyCondition)
	return g.Spec.Endpoint.ServiceType == corev1.ServiceTypeLoadBalancer && c != nil && c.Status != metav1.ConditionTrue &&
		c.Reason == netv1beta1.GatewayReasonNoEndpoint
}

// gatewayReady turns a gateway's Ready condition into a wait answer: a
// gateway that is not ready yet is waited for, whatever the reason (a pod
// being pulled, an address being assigned), and the reason is shown on a
// timeout.
func gatewayReady(conds []metav1.Condition, gen int64, complete bool) error {
	c := meta.FindStatusCondition(conds, netv1beta1.ReadyCondition)
	switch {
	case c == nil:
		return wait.NotYet("no Ready condition yet")
	case c.Status != metav1.ConditionTrue || c.ObservedGeneration != gen:
		return wait.NotYet("%s: %s", c.Reason, c.Message)
	case !complete:
		return wait.NotYet("its status is not complete yet")
	}
	return nil
}

// ensureClient has the client's cluster (local) run the gateway client,
// dialling the published endpoint of the server's (remote).
func (o Settings) ensureClient(ctx context.Context, local, remote *Side) error {
	var gws netv1beta1.GatewayServer
	if err := remote.Client.Get(ctx, types.NamespacedName{Namespace: remote.NS, Name: local.ID}, &gws); err != nil {
		return err
	}
	ep := *gws.Status.Endpoint.DeepCopy()
	if o.ClientAddress != "" {
		ep.Addresses = []netv1beta1.Address{netv1beta1.Address(o.ClientAddress)}
	}
	if o.ClientPort != 0 {
		ep.Port = o.ClientPort
	}
	o.Out.Info("The gateway client dials %v port %d", ep.Addresses, ep.Port)
	gwc := &netv1beta1.GatewayClient{ObjectMeta: metav1.ObjectMeta{Name: remote.ID, Namespace: local.NS}}
	if err := Apply(ctx, local, gwc, func() { ForgeClient(gwc, remote.ID, o.MTU, ep) }); err != nil {
		return err
	}
	return wait.For(ctx, local.Client, client.ObjectKeyFromObject(gwc), gwc, "the "+local.Role+" gateway client to be ready", ClientReady)
}

// ForgeClient makes gwc the gateway client dialling peer's server at ep.
func ForgeClient(gwc *netv1beta1.GatewayClient, peer string, mtu int32, ep netv1beta1.EndpointStatus) {
	labels(&gwc.ObjectMeta, peer)
	gwc.Spec.MTU = mtu
	gwc.Spec.Endpoint = ep
}

// ClientReady tells whether a gateway client is ready.
func ClientReady(g *netv1beta1.GatewayClient) error {
	return gatewayReady(g.Status.Conditions, g.Generation, g.Status.SecretRef != nil)
}

// exchangeKeys copies each gateway's public key into a PublicKey in the
// other cluster.
func (o Settings) exchangeKeys(ctx context.Context, local, remote *Side) error {
	var gws netv1beta1.GatewayServer
	var gwc netv1beta1.GatewayClient
	if err := remote.Client.Get(ctx, types.NamespacedName{Namespace: remote.NS, Name: local.ID}, &gws); err != nil {
		return err
	}
	if err := local.Client.Get(ctx, types.NamespacedName{Namespace: local.NS, Name: remote.ID}, &gwc); err != nil {
		return err
	}
	serverKey, err := PublicKey(ctx, remote, gws.Status.SecretRef)
	if err != nil {
		return err
	}
	clientKey, err := PublicKey(ctx, local, gwc.Status.SecretRef)
	if err != nil {
		return err
	}
	for _, x := range []struct {
		to  *Side
		ID  string
		key []byte
	}{{local, remote.ID, serverKey}, {remote, local.ID, clientKey}} {
		pk := &netv1beta1.PublicKey{ObjectMeta: metav1.ObjectMeta{Name: x.ID, Namespace: x.to.NS}}
		if err := Apply(ctx, x.to, pk, func() { ForgePublicKey(pk, x.ID, x.key) }); err != nil {
			return err
		}
	}
	return nil
}

// ForgePublicKey makes pk hold the public key of peer's gateway.
func ForgePublicKey(pk *netv1beta1.PublicKey, peer string, key []byte) {
	labels(&pk.ObjectMeta, peer)
	pk.Labels[netv1beta1.GatewayResourceLabel] = "true"
	pk.Spec.PublicKey = key
}

// PublicKey reads a gateway's public key from its key Secret.
func PublicKey(ctx context.Context, s *Side, ref *corev1.ObjectReference) ([]byte, error) {
	if ref == nil {
		return nil, fmt.Errorf("the %s gateway has no key Secret yet", s.Role)
	}
	ns := ref.Namespace
	if ns == "" {
		ns = s.NS
	}
	var sec corev1.Secret
	if err := s.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: ref.Name}, &sec); err != nil {
		return nil, fmt.Errorf("reading the %s gateway's key Secret: %w", s.Role, err)
	}
	key := sec.Data[consts.PublicKeyKey]
	if len(key) != 32 {
		return nil, fmt.Errorf("the %s gateway's key Secret %s/%s holds no 32-byte public key", s.Role, ns, ref.Name)
	}
	return key, nil
}

// waitConnected waits until both gateways report the tunnel Connected, in
// the Connection of the current gateway (one of an earlier gateway of the
// same name may linger until the garbage collector takes it).
func (o Settings) waitConnected(ctx context.Context, local, remote *Side) error {
	for _, x := range []struct {
		s    *Side
		name string
		gw   client.Object
	}{{remote, local.ID, &netv1beta1.GatewayServer{}}, {local, remote.ID, &netv1beta1.GatewayClient{}}} {
		key := types.NamespacedName{Namespace: x.s.NS, Name: x.name}
		if err := x.s.Client.Get(ctx, key, x.gw); err != nil {
			return fmt.Errorf("reading the %s gateway: %w", x.s.Role, err)
		}
		var conn netv1beta1.Connection
		err := wait.For(ctx, x.s.Client, key, &conn, "the "+x.s.Role+" gateway's tunnel to connect", func(c *netv1beta1.Connection) error {
			switch {
			case c.Spec.GatewayRef.UID != x.gw.GetUID():
				return wait.NotYet("the Connection is an earlier gateway's")
			case c.Status.Value != netv1beta1.Connected:
				return wait.NotYet("the Connection is %q", c.Status.Value)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if conn.Status.Latency.Value != "" {
			o.Out.Info("The %s gateway measures a round trip of %s", x.s.Role, conn.Status.Latency.Value)
		}
	}
	return nil
}

// Disconnect removes the gateways and the exchanged keys on both clusters,
// and with reset the Configurations too.
func Disconnect(ctx context.Context, o Settings, local, remote *Side, reset bool) error {
	start := time.Now()
	var errs []error
	for _, s := range []*Side{local, remote} {
		if err := RemoveFabric(ctx, s.Client, s.NS, otherID(s, local, remote), reset); err != nil {
			errs = append(errs, fmt.Errorf("in the %s cluster: %w", s.Role, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if o.Wait {
		for _, s := range []*Side{local, remote} {
			if err := waitFabricGone(ctx, s, otherID(s, local, remote), reset); err != nil {
				return err
			}
		}
	}
	what := "Gateways and public keys removed on both clusters; the address mapping is kept"
	if reset {
		what = "Gateways, public keys and network configurations removed on both clusters"
	}
	o.Out.Timed(start, "%s", what)
	return nil
}

// RemoveFabric deletes, on one cluster (c), the network fabric with peer
// in its tenant namespace ns: the gateway (server or client, their pods
// with them) and the exchanged public key, and with configurations the
// Configuration of the peer's CIDRs (its address mapping). Disconnect and
// reset do it on both clusters; liqoctl unpeer on each side it unpeers.
func RemoveFabric(ctx context.Context, c client.Client, ns, peer string, configurations bool) error {
	var errs []error
	for _, obj := range fabricObjects(ns, peer, configurations) {
		if err := c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("deleting %T %s/%s: %w", obj, ns, peer, err))
		}
	}
	return errors.Join(errs...)
}

// fabricObjects are the objects of the network fabric with peer in its
// tenant namespace ns, which RemoveFabric deletes.
func fabricObjects(ns, peer string, configurations bool) []client.Object {
	objs := []client.Object{&netv1beta1.GatewayServer{}, &netv1beta1.GatewayClient{}, &netv1beta1.PublicKey{}}
	if configurations {
		objs = append(objs, &netv1beta1.Configuration{})
	}
	for _, obj := range objs {
		obj.SetNamespace(ns)
		obj.SetName(peer)
	}
	return objs
}

// waitFabricGone waits until the objects RemoveFabric deleted on side s
// are gone: the gateways once their controller took their pods down.
func waitFabricGone(ctx context.Context, s *Side, peer string, configurations bool) error {
	for _, obj := range fabricObjects(s.NS, peer, configurations) {
		what := fmt.Sprintf("%s %s/%s in the %s cluster", KindOf(obj), s.NS, peer, s.Role)
		if err := wait.Gone(ctx, s.Client, client.ObjectKeyFromObject(obj), obj, what); err != nil {
			return err
		}
	}
	return nil
}
