package foreigncluster

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/kit"
	"github.com/liqo-go/liqo/pkg/peering"
)

// Reconciler keeps the ForeignCluster of each peer whose tenant namespace
// here holds a peering (in either direction, or the network fabric), and
// removes it when the namespace is gone or holds none any more.
type Reconciler struct {
	Client client.Client
}

// Reconcile recomputes one peer's ForeignCluster; its name is the peer's ID.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	id := req.Name
	p, err := r.gather(ctx, id)
	if err != nil {
		return ctrl.Result{}, err
	}
	fc := &corev1beta1.ForeignCluster{}
	err = r.Client.Get(ctx, types.NamespacedName{Name: id}, fc)
	if p == nil {
		if err == nil && fc.Labels[consts.ManagedByLabel] == consts.ManagedByValue {
			return ctrl.Result{}, client.IgnoreNotFound(r.Client.Delete(ctx, fc))
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if apierrors.IsNotFound(err) {
		fc = &corev1beta1.ForeignCluster{ObjectMeta: metav1.ObjectMeta{Name: id,
			Labels: map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.RemoteClusterIDLabel: id}},
			Spec: corev1beta1.ForeignClusterSpec{ClusterID: corev1beta1.ClusterID(id)}}
		if err := r.Client.Create(ctx, fc); err != nil {
			return ctrl.Result{}, err
		}
	} else if err != nil {
		return ctrl.Result{}, err
	}
	before := fc.DeepCopy()
	fc.Status = Status(p)
	// The conditions are the out-of-band controller's.
	fc.Status.Conditions = before.Status.Conditions
	return ctrl.Result{}, kit.PatchStatus(ctx, r.Client, fc, before)
}

// gather reads the peering's objects; nil means there is no peering.
func (r *Reconciler) gather(ctx context.Context, id string) (*Peering, error) {
	ns := consts.TenantNamespace(id)
	var n corev1.Namespace
	if err := r.Client.Get(ctx, types.NamespacedName{Name: ns}, &n); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	if !n.DeletionTimestamp.IsZero() {
		return nil, nil
	}
	p := &Peering{Namespace: ns, Nodes: map[string]*corev1.Node{}}
	var id1 authv1beta1.Identity
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: consts.IdentityName(id)}, &id1); err == nil {
		p.Identity = &id1
	} else if !apierrors.IsNotFound(err) {
		return nil, err
	}
	var t authv1beta1.Tenant
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: id}, &t); err == nil {
		p.Tenant = &t
	} else if !apierrors.IsNotFound(err) {
		return nil, err
	}
	var vns offv1beta1.VirtualNodeList
	if err := r.Client.List(ctx, &vns, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	p.VirtualNodes = vns.Items
	for _, vn := range vns.Items {
		var node corev1.Node
		if err := r.Client.Get(ctx, types.NamespacedName{Name: vn.Name}, &node); err == nil {
			p.Nodes[vn.Name] = &node
		}
	}
	var quotas offv1beta1.QuotaList
	if err := r.Client.List(ctx, &quotas, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	p.Quotas = quotas.Items
	if err := r.gatherNetwork(ctx, ns, id, p); err != nil {
		return nil, err
	}
	var req corev1.Secret
	switch err := r.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: peering.OutOfBandRequestSecret}, &req); {
	case err == nil:
		p.OutOfBand = req.Labels[peering.OutOfBandRequestLabel] == "true"
	case !apierrors.IsNotFound(err):
		return nil, err
	}
	if p.empty() {
		// A tenant namespace liqoctl unpeer kept (its default) holds no
		// peering: no ForeignCluster, so no peer in liqoctl info.
		return nil, nil
	}
	return p, nil
}

// empty tells whether a tenant namespace holds nothing of a peering in
// either direction: no credentials, no virtual node or quota, no fabric.
func (p *Peering) empty() bool {
	return !p.OutOfBand && p.Identity == nil && p.Tenant == nil && len(p.VirtualNodes) == 0 && len(p.Quotas) == 0 &&
		p.Configuration == nil && p.GatewayServer == nil && p.GatewayClient == nil && len(p.Connections) == 0
}

// gatherNetwork reads the network fabric's objects with the peer, named
// after it in its tenant namespace (the Connections after their gateway).
func (r *Reconciler) gatherNetwork(ctx context.Context, ns, id string, p *Peering) error {
	key := types.NamespacedName{Namespace: ns, Name: id}
	cfg, server, gwClient := &netv1beta1.Configuration{}, &netv1beta1.GatewayServer{}, &netv1beta1.GatewayClient{}
	for _, x := range []struct {
		obj  client.Object
		keep func()
	}{
		{cfg, func() { p.Configuration = cfg }},
		{server, func() { p.GatewayServer = server }},
		{gwClient, func() { p.GatewayClient = gwClient }},
	} {
		switch err := r.Client.Get(ctx, key, x.obj); {
		case err == nil:
			x.keep()
		case !apierrors.IsNotFound(err):
			return err
		}
	}
	var conns netv1beta1.ConnectionList
	if err := r.Client.List(ctx, &conns, client.InNamespace(ns)); err != nil {
		return err
	}
	p.Connections = conns.Items
	return nil
}

// byNamespace maps an object in a tenant namespace to its peer.
func byNamespace(_ context.Context, o client.Object) []reconcile.Request {
	ns := o.GetNamespace()
	if ns == "" {
		ns = o.GetName() // the tenant namespace itself
	}
	id, ok := consts.ClusterIDOfTenantNamespace(ns)
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: id}}}
}

func byNodeLabel(_ context.Context, o client.Object) []reconcile.Request {
	id := o.GetLabels()[consts.RemoteClusterIDLabel]
	if o.GetLabels()[consts.TypeLabel] != consts.TypeVirtualNode || id == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: id}}}
}

// SetupWithManager registers the controller and what wakes it.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	ns := handler.EnqueueRequestsFromMapFunc(byNamespace)
	return ctrl.NewControllerManagedBy(mgr).Named("foreigncluster").
		For(&corev1beta1.ForeignCluster{}).
		Watches(&corev1.Namespace{}, ns).
		Watches(&authv1beta1.Tenant{}, ns).
		Watches(&authv1beta1.Identity{}, ns).
		Watches(&offv1beta1.VirtualNode{}, ns).
		Watches(&offv1beta1.Quota{}, ns).
		Watches(&netv1beta1.Configuration{}, ns).
		Watches(&netv1beta1.GatewayServer{}, ns).
		Watches(&netv1beta1.GatewayClient{}, ns).
		Watches(&netv1beta1.Connection{}, ns).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(byNodeLabel)).
		// Only the out-of-band requests (the cache holds no Secret data).
		Watches(&corev1.Secret{}, ns, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetLabels()[peering.OutOfBandRequestLabel] == "true"
		}))).
		Complete(r)
}
