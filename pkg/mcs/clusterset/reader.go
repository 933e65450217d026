package clusterset

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	cmipam "github.com/liqo-go/liqo/pkg/controllermanager/ipam"
	"github.com/liqo-go/liqo/pkg/controllermanager/replicator"
	"github.com/liqo-go/liqo/pkg/ipam"
	"github.com/liqo-go/liqo/pkg/kit"
	"github.com/liqo-go/liqo/pkg/mcs/trust"
	"github.com/liqo-go/liqo/pkg/remotecluster"
)

// Reader reads each peer's ExportRecords into the Store. A reconcile is
// one peer (the request's Name), all its records at once: a peer's
// exports are replaced as a whole, so one gone is forgotten.
type Reader struct {
	Client client.Client
	// ClusterID is this cluster's: its own records, beside the peers'
	// in the tenant namespaces, are not read.
	ClusterID string
	Remotes   *remotecluster.Registry
	Store     *Store
	Recorder  record.EventRecorder

	watches *replicator.Watches
}

// SetupWithManager registers the Reader: it wakes on a change of the
// records here or on a provider, and of a peer's Configuration (its
// networks), Tenant or Identity.
func (r *Reader) SetupWithManager(mgr ctrl.Manager) error {
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorderFor("liqo-mcs-clusterset")
	}
	r.watches = replicator.NewWatches(r.Remotes, func() client.Object { return &offv1beta1.ExportRecord{} })
	if err := mgr.Add(r.watches); err != nil {
		return err
	}
	byPeer := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		if id, ok := consts.ClusterIDOfTenantNamespace(o.GetNamespace()); ok {
			return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: id}}}
		}
		return nil
	})
	return ctrl.NewControllerManagedBy(mgr).Named("mcs-clusterset").
		Watches(&offv1beta1.ExportRecord{}, byPeer).
		Watches(&netv1beta1.Configuration{}, byPeer).
		Watches(&authv1beta1.Tenant{}, byPeer).
		Watches(&authv1beta1.Identity{}, byPeer).
		WatchesRawSource(r.watches.Source(byPeer)).
		Complete(r)
}

// Reconcile reads the records of peer req.Name.
func (r *Reader) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	sender := req.Name
	peers, err := ListPeers(ctx, r.Client)
	if err != nil {
		return ctrl.Result{}, err
	}
	consumer, provider := peers.Has(sender)
	// No Configuration (no network fabric with the peer): the zero mapping,
	// and every endpoint refused, as none can be reached or checked.
	mapping, _, err := cmipam.PeerMapping(ctx, r.Client, sender)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("reading the network Configuration of %s: %w", sender, err)
	}
	entries := map[types.NamespacedName]Entry{}
	if consumer {
		var list offv1beta1.ExportRecordList
		if err := r.Client.List(ctx, &list, client.InNamespace(consts.TenantNamespace(sender))); err != nil {
			return ctrl.Result{}, err
		}
		if err := r.accept(ctx, sender, mapping, r.Client, list.Items, entries, nil); err != nil {
			return ctrl.Result{}, err
		}
	}
	if provider {
		if err := r.readProvider(ctx, sender, mapping, entries); err != nil {
			return ctrl.Result{}, err
		}
	} else {
		r.watches.Forget(sender, nil)
	}
	r.Store.set(ctx, sender, entries)
	return ctrl.Result{}, nil
}

// readProvider reads the records provider wrote in this cluster's tenant
// namespace there, from the provider's shared cache of that namespace.
func (r *Reader) readProvider(ctx context.Context, provider string, mapping ipam.Mapping, entries map[types.NamespacedName]Entry) error {
	c, ns, err := r.Remotes.Tenant(ctx, provider)
	if err != nil {
		if apierrors.IsNotFound(err) {
			r.watches.Forget(provider, nil)
		}
		// The Identity is not ready yet: its update wakes us.
		ctrl.LoggerFrom(ctx).Info("provider not reachable yet", "reason", err.Error())
		return nil
	}
	if err := r.watches.Ensure(provider, c, ns); err != nil {
		return err
	}
	nc, err := c.NamespaceCache(ctx, ns, remotecluster.CacheOptions{Name: replicator.TenantCaches})
	if err != nil {
		return err
	}
	var list offv1beta1.ExportRecordList
	if err := nc.List(ctx, &list); err != nil {
		return err
	}
	id := &authv1beta1.Identity{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: consts.TenantNamespace(provider), Name: consts.IdentityName(provider)}, id); err != nil {
		return client.IgnoreNotFound(err)
	}
	return r.accept(ctx, provider, mapping, c.Client, list.Items, entries, id)
}

// accept checks the records sender wrote, keeps the accepted ones in
// entries, and sets their Accepted condition through c (the client of the
// cluster holding them). A refused record gets a Warning Event, on the
// record itself when it is here, else on warnOn (the provider's Identity).
func (r *Reader) accept(ctx context.Context, sender string, mapping ipam.Mapping, c client.Client,
	records []offv1beta1.ExportRecord, entries map[types.NamespacedName]Entry, warnOn client.Object) error {
	for i := range records {
		rec := &records[i]
		if rec.Labels[mcsv1beta1.LabelSourceCluster] == r.ClusterID {
			continue // this cluster's own record for the peer
		}
		e, eps, err := trust.Record(sender, mapping, rec)
		cond := kit.Condition{Type: offv1beta1.ExportRecordAcceptedCondition, OK: err == nil, Reason: "Accepted",
			Message: fmt.Sprintf("imported by cluster %s", r.ClusterID)}
		if err != nil {
			cond.Reason, cond.Message = "Refused", err.Error()
		} else {
			entries[types.NamespacedName{Namespace: rec.Spec.Namespace, Name: rec.Spec.Service}] = Entry{Export: e,
				AddressType: rec.Spec.Endpoints.AddressType, Endpoints: eps, Ports: rec.Spec.Endpoints.Ports}
		}
		before := rec.DeepCopy()
		if !kit.SetCondition(&rec.Status.Conditions, rec.Generation, cond) {
			continue
		}
		if err != nil {
			on := warnOn
			if on == nil {
				on = rec
			}
			r.Recorder.Eventf(on, corev1.EventTypeWarning, "ExportRefused", "ExportRecord %s of cluster %s: %v", rec.Name, sender, err)
		}
		if err := kit.PatchStatus(ctx, c, rec, before); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}
