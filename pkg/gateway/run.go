package gateway

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/liqo-go/liqo/apis"
	ipamv1alpha1 "github.com/liqo-go/liqo/apis/ipam/v1alpha1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/kit"
)

// Applier puts a State into the gateway's network namespace. Apply is
// idempotent (it runs on every change) and Close removes all it added.
type Applier interface {
	Apply(ctx context.Context, s State) error
	Close() error
}

// Config is what the gateway is told by its Deployment.
type Config struct {
	Mode            Mode
	Name, Namespace string
	RemoteClusterID string
	// Kind of the gateway object, for the Connection's reference.
	Kind string
	MTU  int
	// Tunnel addresses of this end and the peer's.
	Local, Peer net.IP
	HealthPort  int
	// MetricsAddr is the listen address of the metrics endpoint (HTTPS,
	// for callers allowed to get /metrics; "0": none).
	MetricsAddr string
	// Self is the gateway pod's address (State.Self).
	Self netip.Addr
	// PodName is the gateway pod's name: the replica holding the gateway's
	// Lease labels its pod active (see election.go).
	PodName string
}

// Run runs the gateway until ctx ends: it watches the peer's PublicKey and
// Configuration in its namespace and the cluster's Nodes, applies the
// resulting State, and reports the connection. The datapath is torn down
// on the way out (the pod's network namespace goes with the pod anyway;
// this matters for a restart in place).
func Run(ctx context.Context, restCfg *rest.Config, cfg Config, dp Applier) error {
	defer func() { _ = dp.Close() }()
	if cfg.MetricsAddr == "" {
		cfg.MetricsAddr = "0"
	}
	mgr, err := ctrl.NewManager(restCfg, ctrl.Options{
		Scheme: apis.NewScheme(),
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			&netv1beta1.PublicKey{}:     {Namespaces: map[string]cache.Config{cfg.Namespace: {}}},
			&netv1beta1.Configuration{}: {Namespaces: map[string]cache.Config{cfg.Namespace: {}}},
			&netv1beta1.Connection{}:    {Namespaces: map[string]cache.Config{cfg.Namespace: {}}},
			&netv1beta1.GatewayServer{}: {Namespaces: map[string]cache.Config{cfg.Namespace: {}}},
			&netv1beta1.GatewayClient{}: {Namespaces: map[string]cache.Config{cfg.Namespace: {}}},
		}},
		Metrics:                kit.MetricsServer(cfg.MetricsAddr),
		HealthProbeBindAddress: "0",
		// Only the replica holding the Lease runs the tunnel and the
		// controllers below; the others stand by (election.go).
		LeaderElection:                true,
		LeaderElectionID:              consts.GatewayResourceName(cfg.Name),
		LeaderElectionNamespace:       cfg.Namespace,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 ptr.To(leaseDuration),
		RenewDeadline:                 ptr.To(renewDeadline),
		RetryPeriod:                   ptr.To(retryPeriod),
	})
	if err != nil {
		return err
	}
	if err := standBy(ctx, mgr.GetClient(), cfg); err != nil {
		return err
	}
	var ready, active atomic.Bool
	r := &syncer{c: mgr.GetClient(), cfg: cfg, dp: dp, ready: &ready}
	if err := r.setup(mgr); err != nil {
		return err
	}
	if err := mgr.Add(runnable(func(ctx context.Context) error { return activate(ctx, mgr.GetClient(), cfg, &active) })); err != nil {
		return err
	}
	check := &Checker{Local: cfg.Local, Peer: cfg.Peer, Interval: 2 * time.Second, Lost: 5}
	rep := &reporter{c: mgr.GetClient(), key: types.NamespacedName{Namespace: cfg.Namespace, Name: cfg.Name},
		typ: connectionType(cfg.Mode), remote: cfg.RemoteClusterID, refresh: 10 * time.Second,
		gateway: corev1.ObjectReference{APIVersion: netv1beta1.GroupVersion.String(), Kind: cfg.Kind, Namespace: cfg.Namespace, Name: cfg.Name}}
	if err := mgr.Add(runnable(func(ctx context.Context) error { return check.Run(ctx) })); err != nil {
		return err
	}
	if err := mgr.Add(runnable(func(ctx context.Context) error { rep.run(ctx, check); return nil })); err != nil {
		return err
	}
	if r, ok := dp.(Rehandshaker); ok && cfg.Mode == Client {
		if err := mgr.Add(runnable(func(ctx context.Context) error { redial(ctx, check, r); return nil })); err != nil {
			return err
		}
	}
	if err := mgr.Add(runnable(kit.ReleaseStartupMemory(mgr, ctrl.Log.WithName("gateway")))); err != nil {
		return err
	}
	if err := registerDropMetrics(metrics.Registry, dp); err != nil {
		return err
	}
	srv := &http.Server{Addr: ":" + strconv.Itoa(cfg.HealthPort), ReadHeaderTimeout: 5 * time.Second, Handler: healthHandler(&active, &ready)}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	go func() {
		if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			ctrl.Log.Error(err, "health server")
		}
	}()
	return mgr.Start(ctx)
}

// healthHandler answers the kubelet's probes, without credentials: ok,
// but /readyz fails on the active replica until the tunnel is configured
// (a standby replica is ready: ready to take over). It serves nothing
// else: the metrics are on the authenticated metrics endpoint.
func healthHandler(active, ready *atomic.Bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch {
		case req.URL.Path == "/readyz" && active.Load() && !ready.Load():
			http.Error(w, "the tunnel is not configured yet", http.StatusServiceUnavailable)
		case req.URL.Path == "/readyz" || req.URL.Path == "/healthz":
			_, _ = w.Write([]byte("ok"))
		default:
			http.NotFound(w, req)
		}
	})
}

func connectionType(m Mode) netv1beta1.ConnectionType {
	if m == Server {
		return netv1beta1.ServerConnection
	}
	return netv1beta1.ClientConnection
}

// syncer turns every change of what the gateway watches into one Apply of
// the whole State: a single key, so changes arriving together are applied
// once.
type syncer struct {
	c     client.Client
	cfg   Config
	dp    Applier
	ready *atomic.Bool
}

var syncKey = reconcile.Request{NamespacedName: types.NamespacedName{Name: "state"}}

func (s *syncer) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	var uid string
	var gw client.Object = &netv1beta1.GatewayServer{}
	if s.cfg.Mode == Client {
		gw = &netv1beta1.GatewayClient{}
	}
	if err := s.c.Get(ctx, types.NamespacedName{Namespace: s.cfg.Namespace, Name: s.cfg.Name}, gw); err != nil {
		return reconcile.Result{}, fmt.Errorf("reading gateway %s: %w", s.cfg.Name, err)
	}
	uid = string(gw.GetUID())
	pk, err := s.publicKey(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	var conf *netv1beta1.Configuration
	var confs netv1beta1.ConfigurationList
	if err := s.c.List(ctx, &confs, client.InNamespace(s.cfg.Namespace)); err != nil {
		return reconcile.Result{}, err
	}
	for i := range confs.Items {
		c := &confs.Items[i]
		if c.Name == s.cfg.RemoteClusterID || c.Labels[consts.RemoteClusterIDLabel] == s.cfg.RemoteClusterID {
			conf = c
			break
		}
	}
	var nodes corev1.NodeList
	if err := s.c.List(ctx, &nodes); err != nil {
		return reconcile.Result{}, err
	}
	var ips ipamv1alpha1.IPList
	if err := s.c.List(ctx, &ips); err != nil {
		return reconcile.Result{}, err
	}
	state, verr := Desired(uid, pk, conf, nodes.Items)
	state.Self = s.cfg.Self
	var ierr error
	state.IPs, ierr = LocalIPs(ips.Items)
	if verr = errors.Join(verr, ierr); verr != nil {
		// What failed the checks is left out; the rest is applied.
		ctrl.LoggerFrom(ctx).Error(verr, "part of the gateway's input was refused")
	}
	if err := s.dp.Apply(ctx, state); err != nil {
		return reconcile.Result{}, err
	}
	s.ready.Store(true)
	return reconcile.Result{}, nil
}

// publicKey is the peer's PublicKey: the one labelled with the peer's
// cluster ID, else the one named after it.
func (s *syncer) publicKey(ctx context.Context) (*netv1beta1.PublicKey, error) {
	var keys netv1beta1.PublicKeyList
	if err := s.c.List(ctx, &keys, client.InNamespace(s.cfg.Namespace)); err != nil {
		return nil, err
	}
	for i := range keys.Items {
		k := &keys.Items[i]
		if k.Labels[consts.RemoteClusterIDLabel] == s.cfg.RemoteClusterID || k.Name == s.cfg.RemoteClusterID {
			return k, nil
		}
	}
	return nil, nil
}

func (s *syncer) setup(mgr ctrl.Manager) error {
	all := handler.EnqueueRequestsFromMapFunc(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{syncKey}
	})
	// Only what changes the State: a Node's addresses or pod CIDRs, not
	// its heartbeats.
	nodeChanged := predicate.Funcs{UpdateFunc: func(e eventUpdate) bool {
		o, n := e.ObjectOld.(*corev1.Node), e.ObjectNew.(*corev1.Node)
		return !equalNodeRouting(o, n)
	}}
	return ctrl.NewControllerManagedBy(mgr).Named("gateway").
		WatchesRawSource(sourceOnce(syncKey)).
		Watches(&netv1beta1.PublicKey{}, all).
		Watches(&netv1beta1.Configuration{}, all).
		Watches(&corev1.Node{}, all, builder.WithPredicates(nodeChanged)).
		Watches(&ipamv1alpha1.IP{}, all).
		Complete(s)
}
