package quota

import (
	"context"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/kit"
	"github.com/liqo-go/liqo/pkg/webhook/tenancy"
)

// FeedLedger keeps the ledger in step with the stored ShadowPods through
// the manager's ShadowPod informer, and with their pods through its Pod
// informer (the Pods made for ShadowPods: shadowpod.PodCache): a ShadowPod
// deleted while its pod still terminates counts until the pod is gone. It
// returns whether both informers' initial lists have reached the ledger.
func FeedLedger(ctx context.Context, mgr manager.Manager, l *Ledger[types.NamespacedName]) (func() bool, error) {
	// Namespaces are read when a ShadowPod lacks its origin label (made
	// before the webhook existed): asked for now, their informer starts
	// with the cache instead of blocking the ShadowPod informer later.
	if _, err := mgr.GetCache().GetInformer(ctx, &corev1.Namespace{}); err != nil {
		return nil, err
	}
	pods, err := mgr.GetCache().GetInformer(ctx, &corev1.Pod{})
	if err != nil {
		return nil, err
	}
	inf, err := mgr.GetCache().GetInformer(ctx, &offv1beta1.ShadowPod{})
	if err != nil {
		return nil, err
	}
	reader := mgr.GetCache()
	consumer := func(sp *offv1beta1.ShadowPod) string {
		if id := sp.Labels[consts.OriginClusterIDLabel]; id != "" {
			return id
		}
		var ns corev1.Namespace
		if err := reader.Get(ctx, types.NamespacedName{Name: sp.Namespace}, &ns); err != nil {
			return ""
		}
		return tenancy.ConsumerOf(&ns)
	}
	observe := func(obj any) {
		if sp, ok := obj.(*offv1beta1.ShadowPod); ok {
			if c := consumer(sp); c != "" {
				l.Observe(c, client.ObjectKeyFromObject(sp), UsageOf(&sp.Spec.Pod))
			}
		}
	}
	// podAlive reads the cache the Pod informer fills before it calls its
	// handlers: a pod gone before this look is not there, one going after
	// it is Released after it.
	podAlive := func(sp *offv1beta1.ShadowPod) func() bool {
		return func() bool {
			var pod corev1.Pod
			if err := reader.Get(ctx, client.ObjectKeyFromObject(sp), &pod); err != nil {
				return false
			}
			ref := metav1.GetControllerOf(&pod)
			return ref != nil && ref.UID == sp.UID
		}
	}
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    observe,
		UpdateFunc: func(_, obj any) { observe(obj) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if sp, ok := obj.(*offv1beta1.ShadowPod); ok {
				if c := consumer(sp); c != "" {
					l.Forget(c, client.ObjectKeyFromObject(sp), sp.UID, podAlive(sp))
				}
			}
		},
	})
	if err != nil {
		return nil, err
	}
	podReg, err := pods.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) {
			if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if pod, ok := obj.(*corev1.Pod); ok {
				if ref := metav1.GetControllerOf(pod); ref != nil {
					l.Release(ref.UID)
				}
			}
		},
	})
	if err != nil {
		return nil, err
	}
	return func() bool { return reg.HasSynced() && podReg.HasSynced() }, nil
}

// quotaUsageDelay batches the status writes of a burst of ShadowPods.
const quotaUsageDelay = time.Second

// UsageWriter writes a consumer's stored usage into its Quotas'
// status.used, only when it changed. A request names a consumer by its
// tenant namespace.
type UsageWriter struct {
	client client.Client
	ledger *Ledger[types.NamespacedName]
	// queue is the controller's queue, once it runs (on the leader).
	queue atomic.Pointer[workqueue.TypedRateLimitingInterface[reconcile.Request]]
}

// NewUsageWriter returns a writer through c and the ledger whose stored
// usage it writes, which queues the writer on every change.
func NewUsageWriter(c client.Client) (*UsageWriter, *Ledger[types.NamespacedName]) {
	w := &UsageWriter{client: c}
	w.ledger = &Ledger[types.NamespacedName]{OnChange: w.changed}
	return w, w.ledger
}

// changed is the ledger's OnChange: it must not block.
func (w *UsageWriter) changed(consumer string) {
	if q := w.queue.Load(); q != nil {
		(*q).AddAfter(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: consts.TenantNamespace(consumer)}}, quotaUsageDelay)
	}
}

// Reconcile writes the usage into every Quota of one consumer.
func (w *UsageWriter) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	consumer, ok := consts.ClusterIDOfTenantNamespace(req.Namespace)
	if !ok {
		return ctrl.Result{}, nil
	}
	var list offv1beta1.QuotaList
	if err := w.client.List(ctx, &list, client.InNamespace(req.Namespace)); err != nil {
		return ctrl.Result{}, err
	}
	stored := w.ledger.Stored(consumer)
	for _, q := range OwnQuotas(list.Items, consumer) {
		used := usedOf(stored, q.Spec.Resources)
		if SameAmounts(q.Status.Used, used) {
			continue
		}
		before := q.DeepCopy()
		q.Status.Used = used
		if err := kit.PatchStatus(ctx, w.client, &q, before); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// SetupWithManager runs the writer on Quota changes and ledger changes.
func (w *UsageWriter) SetupWithManager(mgr manager.Manager) error {
	byNamespace := handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace()}}}
	})
	return ctrl.NewControllerManagedBy(mgr).Named("quota-usage").
		Watches(&offv1beta1.Quota{}, byNamespace).
		WatchesRawSource(source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
			w.queue.Store(&q)
			return nil
		})).
		Complete(w)
}
