package publish

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/mcs"
	"github.com/liqo-go/liqo/pkg/mcs/clusterset"
	"github.com/liqo-go/liqo/pkg/mcs/merge"
	"github.com/liqo-go/liqo/pkg/mcs/record"
	"github.com/liqo-go/liqo/pkg/remotecluster"
)

// FieldOwner is the field manager of the records.
const FieldOwner = "liqo-mcs"

// Reconciler publishes one ServiceExport (the request) to every peer.
type Reconciler struct {
	Client client.Client
	// Reader reads the exported Services and their EndpointSlices from
	// the API server: the manager's cache holds only liqo's own.
	Reader    client.Reader
	ClusterID string
	Remotes   *remotecluster.Registry
}

// SetupWithManager registers the controller. It wakes on a change of a
// ServiceExport, of its Service or EndpointSlices (through a cache of
// their metadata only), and of the peers: a new peer gets every export.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil {
		r.Client = mgr.GetClient()
	}
	if r.Reader == nil {
		r.Reader = mgr.GetAPIReader()
	}
	b, err := WatchExported(mgr, ctrl.NewControllerManagedBy(mgr).Named("mcs-publish").
		WithOptions(controller.Options{MaxConcurrentReconciles: mcs.Workers}))
	if err != nil {
		return err
	}
	return b.Watches(&authv1beta1.Tenant{}, handler.EnqueueRequestsFromMapFunc(r.all)).
		Watches(&authv1beta1.Identity{}, handler.EnqueueRequestsFromMapFunc(r.all)).
		Complete(r)
}

// all maps a peer's change to every export.
func (r *Reconciler) all(ctx context.Context, _ client.Object) []reconcile.Request {
	var list mcsv1beta1.ServiceExportList
	if err := r.Client.List(ctx, &list); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, se := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&se)})
	}
	return out
}

// Reconcile writes, or deletes, the export's records at every peer.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	rec, err := r.desired(ctx, req.NamespacedName)
	if err != nil {
		return ctrl.Result{}, err
	}
	peers, err := clusterset.ListPeers(ctx, r.Client)
	if err != nil {
		return ctrl.Result{}, err
	}
	name := record.Name(r.ClusterID, req.Namespace, req.Name)
	var errs []error
	for _, consumer := range peers.Consumers {
		errs = append(errs, r.write(ctx, r.Client, consts.TenantNamespace(consumer), name, rec))
	}
	for _, provider := range peers.Providers {
		c, ns, err := r.Remotes.Tenant(ctx, provider)
		if err != nil {
			// Not reachable yet: the Identity's update wakes us.
			ctrl.LoggerFrom(ctx).Info("provider not reachable yet", "provider", provider, "reason", err.Error())
			continue
		}
		errs = append(errs, r.write(ctx, c.Client, ns, name, rec))
	}
	return ctrl.Result{}, errors.Join(errs...)
}

func (r *Reconciler) desired(ctx context.Context, key client.ObjectKey) (*offv1beta1.ExportRecord, error) {
	return Own(ctx, r.Client, r.Reader, r.ClusterID, key)
}

// Own is the record of cluster's export key, nil when there is none to
// publish: no export, or one whose Service is missing or cannot be
// exported. c reads the ServiceExport, reader the Service and its
// EndpointSlices.
func Own(ctx context.Context, c client.Client, reader client.Reader, cluster string, key client.ObjectKey) (*offv1beta1.ExportRecord, error) {
	se := &mcsv1beta1.ServiceExport{}
	if err := c.Get(ctx, key, se); err != nil || !se.DeletionTimestamp.IsZero() {
		return nil, client.IgnoreNotFound(err)
	}
	svc := &corev1.Service{}
	if err := reader.Get(ctx, key, svc); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if merge.Exportable(svc) != "" {
		return nil, nil
	}
	var slices discoveryv1.EndpointSliceList
	if err := reader.List(ctx, &slices, client.InNamespace(key.Namespace), client.MatchingLabels{discoveryv1.LabelServiceName: key.Name}); err != nil {
		return nil, fmt.Errorf("reading the endpoints of the exported Service: %w", err)
	}
	return record.Forge(cluster, "", se, svc, slices.Items), nil
}

// write applies rec (nil: deletes the record name) in namespace through c.
func (r *Reconciler) write(ctx context.Context, c client.Client, namespace, name string, rec *offv1beta1.ExportRecord) error {
	if rec == nil {
		err := c.Delete(ctx, &offv1beta1.ExportRecord{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	rec = rec.DeepCopy()
	rec.Namespace = namespace
	if err := c.Patch(ctx, rec, client.Apply, client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("writing ExportRecord %s/%s: %w", namespace, name, err)
	}
	return nil
}
