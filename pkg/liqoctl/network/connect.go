package network

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
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	ipamv1alpha1 "github.com/liqo-go/liqo/apis/ipam/v1alpha1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/peering"
	"github.com/liqo-go/liqo/pkg/wait"
)

// side is one cluster of the connection.
type side struct {
	c  *factory.Cluster
	id string
	// ns is the tenant namespace of the other cluster, where this side's
	// objects for it live.
	ns   string
	cidr netv1beta1.ClusterConfigCIDR
}

// pair reaches both clusters and learns their IDs.
func (o *Options) pair(ctx context.Context) (local, remote *side, err error) {
	reach := min(o.Timeout, 10*time.Second)
	for _, c := range []*factory.Cluster{&o.Local, &o.Remote} {
		if err := c.Connect(ctx, reach); err != nil {
			return nil, nil, err
		}
	}
	li, err := o.Local.FindComponents(ctx)
	if err != nil {
		return nil, nil, err
	}
	ri, err := o.Remote.FindComponents(ctx)
	if err != nil {
		return nil, nil, err
	}
	if li.ID == ri.ID {
		return nil, nil, fmt.Errorf("the local and remote clusters are both %q: a cluster cannot connect to itself", li.ID)
	}
	o.Out.Info("Local cluster %q and remote cluster %q found", li.ID, ri.ID)
	return &side{c: &o.Local, id: li.ID, ns: consts.TenantNamespace(ri.ID)},
		&side{c: &o.Remote, id: ri.ID, ns: consts.TenantNamespace(li.ID)}, nil
}

// Connect sets up the fabric, printing each step.
func (o *Options) Connect(ctx context.Context) error {
	if err := o.validate(); err != nil {
		return err
	}
	local, remote, err := o.pair(ctx)
	if err != nil {
		return err
	}
	steps := o.initSteps()
	client, server := local, remote
	if o.ServerLocation == ServerLocal {
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
		between := func(do func(context.Context, *side, *side) error) func(context.Context, *side, *side) error {
			return func(ctx context.Context, _, _ *side) error { return do(ctx, client, server) }
		}
		steps = append(steps, step{"Gateway server ready", between(o.ensureServer)}, step{"Gateway client ready", between(o.ensureClient)})
		if !o.DisableSharingKeys {
			steps = append(steps, step{"Public keys exchanged", between(o.exchangeKeys)})
		}
	}
	if o.Wait {
		steps = append(steps, step{"Tunnel connected on both sides", func(ctx context.Context, _, _ *side) error {
			return o.waitConnected(ctx, client, server)
		}})
	}
	return o.run(ctx, local, remote, steps)
}

// step is one stage of setting up the fabric, between the two sides.
type step struct {
	what string
	do   func(context.Context, *side, *side) error
}

// initSteps declare each cluster's networks to the other: what network
// init does, and connect first.
func (o *Options) initSteps() []step {
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
func (o *Options) Init(ctx context.Context) error {
	local, remote, err := o.pair(ctx)
	if err != nil {
		return err
	}
	return o.run(ctx, local, remote, o.initSteps())
}

func (o *Options) run(ctx context.Context, local, remote *side, steps []step) error {
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
func reversed(ctx context.Context, local, remote *side) (bool, error) {
	var gws netv1beta1.GatewayServer
	err := local.c.Client.Get(ctx, types.NamespacedName{Namespace: local.ns, Name: remote.id}, &gws)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("looking for a gateway server for %q in the %s cluster: %w", remote.id, local.c.Role, err)
	}
	var gwc netv1beta1.GatewayClient
	err = remote.c.Client.Get(ctx, types.NamespacedName{Namespace: remote.ns, Name: local.id}, &gwc)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

func (o *Options) ensureNamespaces(ctx context.Context, local, remote *side) error {
	for _, s := range []*side{local, remote} {
		other := remote
		if s == remote {
			other = local
		}
		if err := peering.EnsureTenantNamespace(ctx, s.c.Client, s.ns, other.id); err != nil {
			return fmt.Errorf("%s tenant namespace %s: %w", s.c.Role, s.ns, err)
		}
	}
	return nil
}

// localCIDRs reads a cluster's pod and external CIDRs from the Networks
// its controller manager publishes.
func localCIDRs(ctx context.Context, s *side) error {
	for _, n := range []struct {
		name string
		into *[]netv1beta1.CIDR
	}{{"pod-cidr", &s.cidr.Pod}, {ipamv1alpha1.ExternalNetworkName, &s.cidr.External}} {
		// A manager that just took its lease publishes them a moment
		// later: wait a little before concluding they are missing.
		var net ipamv1alpha1.Network
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := wait.For(wctx, s.c.Client, types.NamespacedName{Namespace: s.c.Namespace, Name: n.name}, &net, n.name, func(*ipamv1alpha1.Network) error { return nil })
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			return fmt.Errorf("the %s cluster %q publishes no %s Network in namespace %s (%v): start its controller manager with --pod-cidr", s.c.Role, s.id, n.name, s.c.Namespace, err)
		}
		*n.into = []netv1beta1.CIDR{net.Spec.CIDR}
	}
	return nil
}

// ensureConfigurations gives each cluster the other's CIDRs and waits for
// both IPAMs to remap them.
func (o *Options) ensureConfigurations(ctx context.Context, local, remote *side) error {
	for _, s := range []*side{local, remote} {
		if err := localCIDRs(ctx, s); err != nil {
			return err
		}
	}
	for _, s := range []*side{local, remote} {
		other := remote
		if s == remote {
			other = local
		}
		cfg := &netv1beta1.Configuration{ObjectMeta: metav1.ObjectMeta{Name: other.id, Namespace: s.ns}}
		if err := apply(ctx, s, cfg, func() { forgeConfiguration(cfg, other.id, other.cidr) }); err != nil {
			return err
		}
	}
	for _, s := range []*side{local, remote} {
		cfg, err := waitConfigured(ctx, s, otherID(s, local, remote))
		if err != nil {
			return err
		}
		o.Out.Info("The %s cluster reaches %q's pods at %v", s.c.Role, otherID(s, local, remote), cfg.Status.Remote.CIDR.Pod)
	}
	return nil
}

// apply creates or updates obj on s's cluster as forge makes it.
func apply(ctx context.Context, s *side, obj client.Object, forge func()) error {
	if _, err := controllerutil.CreateOrUpdate(ctx, s.c.Client, obj, func() error { forge(); return nil }); err != nil {
		return fmt.Errorf("the %s cluster's %s %s/%s: %w", s.c.Role, kindOf(obj), obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// kindOf names obj's kind for messages.
func kindOf(obj client.Object) string {
	return strings.TrimPrefix(fmt.Sprintf("%T", obj), "*v1beta1.")
}

// forgeConfiguration makes cfg give its cluster the CIDRs of peer.
func forgeConfiguration(cfg *netv1beta1.Configuration, peer string, cidr netv1beta1.ClusterConfigCIDR) {
	labels(&cfg.ObjectMeta, peer)
	cfg.Spec.Remote = netv1beta1.ClusterConfig{CIDR: cidr}
}

// waitConfigured waits until s's IPAM remapped the CIDRs of the
// Configuration name in s's tenant namespace, and returns it.
func waitConfigured(ctx context.Context, s *side, name string) (*netv1beta1.Configuration, error) {
	cfg := &netv1beta1.Configuration{}
	key := types.NamespacedName{Namespace: s.ns, Name: name}
	err := wait.For(ctx, s.c.Client, key, cfg, "the "+s.c.Role+" cluster's Configuration to be remapped", func(c *netv1beta1.Configuration) error {
		cond := meta.FindStatusCondition(c.Status.Conditions, netv1beta1.NetworkCIDRsConfiguredCondition)
		switch {
		case cond == nil || cond.ObservedGeneration != c.Generation:
			return wait.NotYet("no NetworkCIDRsConfigured condition for the current spec")
		case cond.Status == metav1.ConditionTrue:
			return nil
		case cond.Reason == netv1beta1.ConfigurationReasonWaiting:
			return wait.NotYet("%s", cond.Message)
		}
		return fmt.Errorf("the %s cluster cannot remap the peer's CIDRs: %s (%s)", s.c.Role, cond.Message, cond.Reason)
	})
	return cfg, err
}

func otherID(s, local, remote *side) string {
	if s == local {
		return remote.id
	}
	return local.id
}

func labels(m *metav1.ObjectMeta, remoteID string) {
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	m.Labels[consts.RemoteClusterIDLabel] = remoteID
}

// loadBalancerWait is how long a default LoadBalancer Service of the
// gateway server may go without an address before it is replaced by a
// NodePort: long enough for a cloud's load balancer to be provisioned
// (usually well under a minute), short enough not to stall a peering on a
// cluster that has no implementation at all.
const loadBalancerWait = 90 * time.Second

// ensureServer has the server's cluster (remote: the other side of the
// client's, local) run the gateway server and waits for its endpoint. The Service type defaults to LoadBalancer; where the user
// did not choose it, a load balancer that gives no address in
// loadBalancerWait is taken for a missing implementation and the server is
// exposed by a NodePort instead, saying so.
func (o *Options) ensureServer(ctx context.Context, local, remote *side) error {
	gws := &netv1beta1.GatewayServer{ObjectMeta: metav1.ObjectMeta{Name: local.id, Namespace: remote.ns}}
	typ := corev1.ServiceType(o.ServerServiceType)
	if err := remote.c.Client.Get(ctx, client.ObjectKeyFromObject(gws), gws); err == nil && !o.serverServiceTypeChosen() && gws.Spec.Endpoint.ServiceType != "" {
		// Running again keeps what an earlier run settled on.
		typ = gws.Spec.Endpoint.ServiceType
	}
	if err := o.applyServer(ctx, remote, local.id, gws, typ); err != nil {
		return err
	}
	what := "the " + remote.c.Role + " gateway server to be ready"
	ready := serverReady
	if typ != corev1.ServiceTypeLoadBalancer || o.serverServiceTypeChosen() {
		return wait.For(ctx, remote.c.Client, client.ObjectKeyFromObject(gws), gws, what, ready)
	}
	lbCtx, cancel := context.WithTimeout(ctx, loadBalancerWait)
	err := wait.For(lbCtx, remote.c.Client, client.ObjectKeyFromObject(gws), gws, what, ready)
	cancel()
	if err == nil || ctx.Err() != nil || !waitingForLoadBalancer(gws) {
		return err
	}
	o.Out.Info("The %s cluster gave the gateway server's LoadBalancer Service no address in %s (no load-balancer implementation, as on kind or k3s?): "+
		"exposing it as a NodePort instead (--server-service-type chooses)", remote.c.Role, loadBalancerWait)
	if err := o.applyServer(ctx, remote, local.id, gws, corev1.ServiceTypeNodePort); err != nil {
		return err
	}
	return wait.For(ctx, remote.c.Client, client.ObjectKeyFromObject(gws), gws, what, ready)
}

// serverReady tells whether a gateway server is ready, with the endpoint
// its clients dial.
func serverReady(g *netv1beta1.GatewayServer) error {
	return gatewayReady(g.Status.Conditions, g.Generation, g.Status.Endpoint != nil && len(g.Status.Endpoint.Addresses) > 0 && g.Status.SecretRef != nil)
}

// applyServer creates or updates, on the server's cluster (remote), the
// GatewayServer for the cluster localID, exposed by a Service of type typ.
func (o *Options) applyServer(ctx context.Context, remote *side, localID string, gws *netv1beta1.GatewayServer, typ corev1.ServiceType) error {
	return apply(ctx, remote, gws, func() { o.forgeServer(gws, localID, typ) })
}

// forgeServer makes gws the gateway server for peer the flags describe,
// exposed by a Service of type typ.
func (o *Options) forgeServer(gws *netv1beta1.GatewayServer, peer string, typ corev1.ServiceType) {
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
func (o *Options) ensureClient(ctx context.Context, local, remote *side) error {
	var gws netv1beta1.GatewayServer
	if err := remote.c.Client.Get(ctx, types.NamespacedName{Namespace: remote.ns, Name: local.id}, &gws); err != nil {
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
	gwc := &netv1beta1.GatewayClient{ObjectMeta: metav1.ObjectMeta{Name: remote.id, Namespace: local.ns}}
	if err := apply(ctx, local, gwc, func() { forgeClient(gwc, remote.id, o.MTU, ep) }); err != nil {
		return err
	}
	return wait.For(ctx, local.c.Client, client.ObjectKeyFromObject(gwc), gwc, "the "+local.c.Role+" gateway client to be ready", clientReady)
}

// forgeClient makes gwc the gateway client dialling peer's server at ep.
func forgeClient(gwc *netv1beta1.GatewayClient, peer string, mtu int32, ep netv1beta1.EndpointStatus) {
	labels(&gwc.ObjectMeta, peer)
	gwc.Spec.MTU = mtu
	gwc.Spec.Endpoint = ep
}

// clientReady tells whether a gateway client is ready.
func clientReady(g *netv1beta1.GatewayClient) error {
	return gatewayReady(g.Status.Conditions, g.Generation, g.Status.SecretRef != nil)
}

// exchangeKeys copies each gateway's public key into a PublicKey in the
// other cluster.
func (o *Options) exchangeKeys(ctx context.Context, local, remote *side) error {
	var gws netv1beta1.GatewayServer
	var gwc netv1beta1.GatewayClient
	if err := remote.c.Client.Get(ctx, types.NamespacedName{Namespace: remote.ns, Name: local.id}, &gws); err != nil {
		return err
	}
	if err := local.c.Client.Get(ctx, types.NamespacedName{Namespace: local.ns, Name: remote.id}, &gwc); err != nil {
		return err
	}
	serverKey, err := publicKey(ctx, remote, gws.Status.SecretRef)
	if err != nil {
		return err
	}
	clientKey, err := publicKey(ctx, local, gwc.Status.SecretRef)
	if err != nil {
		return err
	}
	for _, x := range []struct {
		to  *side
		id  string
		key []byte
	}{{local, remote.id, serverKey}, {remote, local.id, clientKey}} {
		pk := &netv1beta1.PublicKey{ObjectMeta: metav1.ObjectMeta{Name: x.id, Namespace: x.to.ns}}
		if err := apply(ctx, x.to, pk, func() { forgePublicKey(pk, x.id, x.key) }); err != nil {
			return err
		}
	}
	return nil
}

// forgePublicKey makes pk hold the public key of peer's gateway.
func forgePublicKey(pk *netv1beta1.PublicKey, peer string, key []byte) {
	labels(&pk.ObjectMeta, peer)
	pk.Labels[netv1beta1.GatewayResourceLabel] = "true"
	pk.Spec.PublicKey = key
}

// publicKey reads a gateway's public key from its key Secret.
func publicKey(ctx context.Context, s *side, ref *corev1.ObjectReference) ([]byte, error) {
	if ref == nil {
		return nil, fmt.Errorf("the %s gateway has no key Secret yet", s.c.Role)
	}
	ns := ref.Namespace
	if ns == "" {
		ns = s.ns
	}
	var sec corev1.Secret
	if err := s.c.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: ref.Name}, &sec); err != nil {
		return nil, fmt.Errorf("reading the %s gateway's key Secret: %w", s.c.Role, err)
	}
	key := sec.Data[consts.PublicKeyKey]
	if len(key) != 32 {
		return nil, fmt.Errorf("the %s gateway's key Secret %s/%s holds no 32-byte public key", s.c.Role, ns, ref.Name)
	}
	return key, nil
}

// waitConnected waits until both gateways report the tunnel Connected, in
// the Connection of the current gateway (one of an earlier gateway of the
// same name may linger until the garbage collector takes it).
func (o *Options) waitConnected(ctx context.Context, local, remote *side) error {
	for _, x := range []struct {
		s    *side
		name string
		gw   client.Object
	}{{remote, local.id, &netv1beta1.GatewayServer{}}, {local, remote.id, &netv1beta1.GatewayClient{}}} {
		key := types.NamespacedName{Namespace: x.s.ns, Name: x.name}
		if err := x.s.c.Client.Get(ctx, key, x.gw); err != nil {
			return fmt.Errorf("reading the %s gateway: %w", x.s.c.Role, err)
		}
		var conn netv1beta1.Connection
		err := wait.For(ctx, x.s.c.Client, key, &conn, "the "+x.s.c.Role+" gateway's tunnel to connect", func(c *netv1beta1.Connection) error {
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
			o.Out.Info("The %s gateway measures a round trip of %s", x.s.c.Role, conn.Status.Latency.Value)
		}
	}
	return nil
}

// Disconnect removes the gateways and the exchanged keys on both clusters,
// and with reset the Configurations too.
func (o *Options) Disconnect(ctx context.Context, reset bool) error {
	local, remote, err := o.pair(ctx)
	if err != nil {
		return err
	}
	start := time.Now()
	var errs []error
	for _, s := range []*side{local, remote} {
		if err := RemoveFabric(ctx, s.c.Client, s.ns, otherID(s, local, remote), reset); err != nil {
			errs = append(errs, fmt.Errorf("in the %s cluster: %w", s.c.Role, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if o.Wait {
		for _, s := range []*side{local, remote} {
			if err := waitFabricGone(ctx, s.c, s.ns, otherID(s, local, remote), reset); err != nil {
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

// waitFabricGone waits until the objects RemoveFabric deleted on cluster c
// are gone: the gateways once their controller took their pods down.
func waitFabricGone(ctx context.Context, c *factory.Cluster, ns, peer string, configurations bool) error {
	for _, obj := range fabricObjects(ns, peer, configurations) {
		what := fmt.Sprintf("%s %s/%s in the %s cluster", kindOf(obj), ns, peer, c.Role)
		if err := wait.Gone(ctx, c.Client, client.ObjectKeyFromObject(obj), obj, what); err != nil {
			return err
		}
	}
	return nil
}
