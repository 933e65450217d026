package imports

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/mcs"
	"github.com/liqo-go/liqo/pkg/mcs/clusterset"
	"github.com/liqo-go/liqo/pkg/mcs/merge"
	"github.com/liqo-go/liqo/pkg/mcs/publish"
	"github.com/liqo-go/liqo/pkg/mcs/record"
)

// FieldOwner is the field manager of the imports' objects.
const FieldOwner = "liqo-mcs-import"

// Reconciler keeps the import of one Service (the request): of the
// peers' accepted exports (the Store) and of this cluster's own.
type Reconciler struct {
	Client client.Client
	// Reader reads from the API server the cluster's own exported Service
	// and EndpointSlices and the import's objects: the manager's cache
	// holds none of the cluster's EndpointSlices.
	Reader    client.Reader
	ClusterID string
	Store     *clusterset.Store
}

// SetupWithManager registers the controller: it wakes on a change of the
// cluster's own export (its ServiceExport, Service and EndpointSlices)
// and of the peers' exports.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil {
		r.Client = mgr.GetClient()
	}
	if r.Reader == nil {
		r.Reader = mgr.GetAPIReader()
	}
	b, err := publish.WatchExported(mgr, ctrl.NewControllerManagedBy(mgr).Named("mcs-import").
		WithOptions(controller.Options{MaxConcurrentReconciles: mcs.Workers}))
	if err != nil {
		return err
	}
	return b.WatchesRawSource(source.Channel(r.Store.Changed(), &handler.EnqueueRequestForObject{})).Complete(r)
}

// Reconcile writes the import of the Service, or removes it when no
// cluster exports it any more.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ns, name := req.Namespace, req.Name
	entries := r.Store.Entries(ns, name)
	own, err := publish.Own(ctx, r.Client, r.Reader, r.ClusterID, req.NamespacedName)
	if err != nil {
		return ctrl.Result{}, err
	}
	if own != nil {
		// The cluster's own endpoints, as they are: no mapping, no check.
		entries = append(entries, clusterset.Entry{Export: record.Export(own), AddressType: own.Spec.Endpoints.AddressType,
			Endpoints: own.Spec.Endpoints.Endpoints, Ports: own.Spec.Endpoints.Ports})
	}
	// Namespace sameness: a namespace this cluster does not have imports
	// nothing.
	if err := r.Reader.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{}); apierrors.IsNotFound(err) {
		return ctrl.Result{}, nil
	} else if err != nil {
		return ctrl.Result{}, err
	}
	if len(entries) == 0 {
		return ctrl.Result{}, r.remove(ctx, ns, name, nil)
	}
	exports := make([]merge.Export, len(entries))
	for i, e := range entries {
		exports[i] = e.Export
	}
	m := merge.Merge(exports)
	var ips []string
	service := ""
	if m.Spec.Type == mcsv1beta1.ClusterSetIP {
		svc := Service(ns, name, m)
		if err := r.apply(ctx, svc); err != nil {
			return ctrl.Result{}, err
		}
		ips, service = svc.Spec.ClusterIPs, svc.Name
	} else if err := r.deleteOurs(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ServiceName(name)}}); err != nil {
		return ctrl.Result{}, err
	}
	si := ServiceImport(ns, name, m, ips)
	// The status goes through its own subresource, applied alone.
	status := &mcsv1beta1.ServiceImport{TypeMeta: si.TypeMeta, ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Status: si.Status}
	if err := r.apply(ctx, si); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.Client.Status().Patch(ctx, status, client.Apply, client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return ctrl.Result{}, fmt.Errorf("writing the status of ServiceImport %s/%s: %w", ns, name, err)
	}
	sources := map[string]bool{}
	for _, e := range entries {
		sources[e.Export.Cluster] = true
		ports := merge.ServedPorts(m.Spec.Ports, e.Export, e.Ports)
		if err := r.apply(ctx, EndpointSlice(ns, name, service, e.Export.Cluster, e.AddressType, e.Endpoints, ports)); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, r.remove(ctx, ns, name, sources)
}

// apply writes obj, forged, with server-side apply, and reads back into
// it what the server holds.
func (r *Reconciler) apply(ctx context.Context, obj client.Object) error {
	if err := r.Client.Patch(ctx, obj, client.Apply, client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("writing %T %s/%s: %w", obj, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// remove deletes the import's EndpointSlices of the clusters not in keep
// and, when keep is empty, the ServiceImport and the Service too.
func (r *Reconciler) remove(ctx context.Context, ns, name string, keep map[string]bool) error {
	var slices discoveryv1.EndpointSliceList
	if err := r.Reader.List(ctx, &slices, client.InNamespace(ns),
		client.MatchingLabels{mcsv1beta1.LabelServiceName: name, discoveryv1.LabelManagedBy: ManagedBy}); err != nil {
		return err
	}
	var errs []error
	for i := range slices.Items {
		if !keep[slices.Items[i].Labels[mcsv1beta1.LabelSourceCluster]] {
			errs = append(errs, r.deleteOurs(ctx, &slices.Items[i]))
		}
	}
	if len(keep) == 0 {
		errs = append(errs,
			r.deleteOurs(ctx, &mcsv1beta1.ServiceImport{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}),
			r.deleteOurs(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ServiceName(name)}}))
	}
	return errors.Join(errs...)
}

// deleteOurs deletes obj if it is there and ours: a user's object of the
// same name is left alone.
func (r *Reconciler) deleteOurs(ctx context.Context, obj client.Object) error {
	if err := r.Reader.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return client.IgnoreNotFound(err)
	}
	if obj.GetLabels()[consts.ManagedByLabel] != consts.ManagedByValue || obj.GetLabels()[mcsv1beta1.LabelServiceName] == "" {
		return nil
	}
	return client.IgnoreNotFound(r.Client.Delete(ctx, obj, client.Preconditions{UID: ptr.To(obj.GetUID())}))
}
