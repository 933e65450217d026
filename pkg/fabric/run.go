package fabric

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/liqo-go/liqo/apis"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// Applier puts the node's links into its network namespace: Apply is
// idempotent, and with no link it removes everything it ever added.
type Applier interface {
	Apply(links []Link) error
}

// Run keeps node's links in line with the cluster's gateways and
// Configurations until ctx ends. It leaves the links in place on the way
// out: a restarting agent must not cut established traffic; they go when
// the gateways do.
func Run(ctx context.Context, cfg *rest.Config, node string, dp Applier) error {
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 apis.NewScheme(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return err
	}
	if err := setup(mgr, node, dp); err != nil {
		return err
	}
	return mgr.Start(ctx)
}

func setup(mgr ctrl.Manager, node string, dp Applier) error {
	s := &syncer{c: mgr.GetClient(), node: node, dp: dp}
	all := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{syncKey}
	})
	return ctrl.NewControllerManagedBy(mgr).Named("fabric").
		WatchesRawSource(source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
			q.Add(syncKey) // once at start: links of gateways gone while the agent was down are removed
			return nil
		})).
		Watches(&netv1beta1.GatewayServer{}, all).
		Watches(&netv1beta1.GatewayClient{}, all).
		Watches(&netv1beta1.Configuration{}, all).
		Complete(s)
}

var syncKey = reconcile.Request{NamespacedName: types.NamespacedName{Name: "links"}}

// syncer applies the whole set of links on every change: one key, so a
// burst of changes is applied once.
type syncer struct {
	c    client.Client
	node string
	dp   Applier
}

func (s *syncer) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	gws, err := s.gateways(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	links, verr := Desired(s.node, gws)
	if verr != nil {
		// What is contradictory is left out; the rest is applied.
		ctrl.LoggerFrom(ctx).Error(verr, "part of the gateways' routes was refused")
	}
	return reconcile.Result{}, s.dp.Apply(links)
}

// gateways lists the cluster's gateways with a pod address, each with the
// Configuration of its peer.
func (s *syncer) gateways(ctx context.Context) ([]Gateway, error) {
	var servers netv1beta1.GatewayServerList
	var clients netv1beta1.GatewayClientList
	var confs netv1beta1.ConfigurationList
	for _, l := range []client.ObjectList{&servers, &clients, &confs} {
		if err := s.c.List(ctx, l); err != nil {
			return nil, err
		}
	}
	type gw struct {
		obj      client.Object
		internal *netv1beta1.InternalGatewayEndpoint
	}
	var all []gw
	for i := range servers.Items {
		all = append(all, gw{&servers.Items[i], servers.Items[i].Status.InternalEndpoint})
	}
	for i := range clients.Items {
		all = append(all, gw{&clients.Items[i], clients.Items[i].Status.InternalEndpoint})
	}
	var out []Gateway
	var errs []error
	for _, g := range all {
		if !g.obj.GetDeletionTimestamp().IsZero() || g.internal == nil || g.internal.IP == nil {
			continue // no pod yet, or going: no link
		}
		key := client.ObjectKeyFromObject(g.obj).String()
		gateway, err := GatewayFrom(key, string(g.obj.GetUID()), g.internal, peerConfiguration(g.obj, confs.Items))
		if err != nil {
			errs = append(errs, err)
		}
		if gateway.PodIP.IsValid() {
			out = append(out, gateway)
		}
	}
	if err := errors.Join(errs...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "gateways partly refused")
	}
	return out, nil
}

// peerConfiguration is the Configuration of the gateway's peer: in the
// gateway's namespace, labelled with (or named after) the same cluster ID.
func peerConfiguration(gw client.Object, confs []netv1beta1.Configuration) *netv1beta1.Configuration {
	id := gw.GetLabels()[consts.RemoteClusterIDLabel]
	if id == "" {
		id, _ = consts.ClusterIDOfTenantNamespace(gw.GetNamespace())
	}
	for i := range confs {
		c := &confs[i]
		if c.Namespace == gw.GetNamespace() && (c.Labels[consts.RemoteClusterIDLabel] == id || c.Name == id) {
			return c
		}
	}
	return nil
}

// String names a link for logs.
func (l Link) String() string {
	return fmt.Sprintf("%s vni %d via %s: %v", l.Gateway, l.VNI, l.Remote, l.Routes)
}
