package publish

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

// WatchExported makes b, a controller of ServiceExports, wake on a change
// of an export, of the Service of its name and of that Service's
// EndpointSlices. The Services and slices are watched through a cache of
// their metadata only (the manager's holds only liqo's own): the
// reconcile reads them from the API server.
func WatchExported(mgr ctrl.Manager, b *builder.Builder) (*builder.Builder, error) {
	meta, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(), DefaultTransform: cache.TransformStripManagedFields(),
	})
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(meta); err != nil {
		return nil, err
	}
	svc := &metav1.PartialObjectMetadata{}
	svc.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Service"))
	slice := &metav1.PartialObjectMetadata{}
	slice.SetGroupVersionKind(discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice"))
	ofSlice := handler.TypedEnqueueRequestsFromMapFunc(func(_ context.Context, o *metav1.PartialObjectMetadata) []reconcile.Request {
		name := o.Labels[discoveryv1.LabelServiceName]
		// An import's slices (which carry the MCS label) are no export's.
		if _, imported := o.Labels[mcsv1beta1.LabelServiceName]; name == "" || imported {
			return nil
		}
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: o.Namespace, Name: name}}}
	})
	return b.For(&mcsv1beta1.ServiceExport{}).
		WatchesRawSource(source.Kind(meta, svc, &handler.TypedEnqueueRequestForObject[*metav1.PartialObjectMetadata]{})).
		WatchesRawSource(source.Kind(meta, slice, ofSlice)), nil
}
