package export

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/liqo-go/liqo/pkg/kit"
	"github.com/liqo-go/liqo/pkg/mcs"
	"github.com/liqo-go/liqo/pkg/mcs/merge"
)

// Reconciler sets the conditions of the cluster's ServiceExports (see the
// package's documentation).
type Reconciler struct {
	Client client.Client
	// Reader reads the exported Services from the API server: the
	// manager's cache holds only liqo's own Services.
	Reader client.Reader
	// ClusterID is this cluster's ID, the source of its exports.
	ClusterID string
	// Clusterset holds the other clusters' exports; nil for none.
	Clusterset Clusterset
	Recorder   record.EventRecorder
}

// SetupWithManager registers the controller. It wakes on every change of
// a ServiceExport, of the Service of its name (through a cache of the
// Services' metadata only: the reconcile reads the Service itself) and of
// the other clusters' exports.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Client == nil {
		r.Client = mgr.GetClient()
	}
	if r.Reader == nil {
		r.Reader = mgr.GetAPIReader()
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorderFor("liqo-mcs-export")
	}
	services, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(), DefaultTransform: cache.TransformStripManagedFields(),
	})
	if err != nil {
		return err
	}
	if err := mgr.Add(services); err != nil {
		return err
	}
	svc := &metav1.PartialObjectMetadata{}
	svc.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Service"))
	b := ctrl.NewControllerManagedBy(mgr).Named("mcs-serviceexport").
		WithOptions(controller.Options{MaxConcurrentReconciles: mcs.Workers}).
		For(&mcsv1beta1.ServiceExport{}).
		WatchesRawSource(source.Kind(services, svc, &handler.TypedEnqueueRequestForObject[*metav1.PartialObjectMetadata]{}))
	if r.Clusterset != nil {
		b = b.WatchesRawSource(source.Channel(r.Clusterset.Changed(), &handler.EnqueueRequestForObject{}))
	}
	return b.Complete(r)
}

// Reconcile evaluates one ServiceExport and writes its status.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	se := &mcsv1beta1.ServiceExport{}
	if err := r.Client.Get(ctx, req.NamespacedName, se); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !se.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	svc := &corev1.Service{}
	switch err := r.Reader.Get(ctx, req.NamespacedName, svc); {
	case apierrors.IsNotFound(err):
		svc = nil
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("reading the exported Service: %w", err)
	}
	var peers []merge.Export
	if svc != nil && r.Clusterset != nil {
		var err error
		if peers, err = r.Clusterset.Exports(ctx, req.Namespace, req.Name); err != nil {
			return ctrl.Result{}, fmt.Errorf("reading the clusterset's exports: %w", err)
		}
	}
	before := se.DeepCopy()
	events := updateStatus(se, evaluate(r.ClusterID, se, svc, peers))
	if err := kit.PatchStatus(ctx, r.Client, se, before); err != nil {
		return ctrl.Result{}, err
	}
	// Recorded once the status holds what they tell.
	for _, e := range events {
		r.Recorder.Event(se, e.typ, e.reason, e.message)
	}
	return ctrl.Result{}, nil
}
