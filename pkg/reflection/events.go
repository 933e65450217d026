package reflection

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/clientcfg"
	"github.com/liqo-go/liqo/pkg/reflection/forge"
)

// Events is the kind name of the event reflection, which runs the other
// way: the Events of the provider's pods are copied onto the local pods.
const Events = "events"

// eventReflector copies the Events of the pods in the twin namespaces
// onto the local pods they run for. Keys are the local namespace and the
// remote Event's name.
type eventReflector struct {
	r *reflector
	// events writes the copies at a kubelet's event rate: they are best
	// effort, and must not take the API server from the pods.
	events  kubernetes.Interface
	queue   workqueue.TypedRateLimitingInterface[types.NamespacedName]
	metrics *kindMetrics
}

// eventQPS and eventBurst are a kubelet's defaults for its Events.
const eventQPS, eventBurst = 50, 100

func newEventReflector(r *reflector) (*eventReflector, error) {
	cfg := rest.CopyConfig(r.localConfig)
	cfg.QPS, cfg.Burst = eventQPS, eventBurst
	cs, err := kubernetes.NewForConfig(clientcfg.Protobuf(cfg))
	if err != nil {
		return nil, err
	}
	return &eventReflector{r: r, events: cs,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[types.NamespacedName](5*time.Millisecond, 30*time.Second),
			workqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{Name: "reflection-" + Events + "-" + r.cfg.NodeName}),
		metrics: newKindMetrics(r.cfg.NodeName, Events),
	}, nil
}

// remoteCache keeps only the Events about pods: the twin namespace's
// pods are all ours.
func (e *eventReflector) remoteCache(labels.Selector) (client.Object, cache.ByObject) {
	return &corev1.Event{}, cache.ByObject{Field: fields.OneTermEqualSelector("involvedObject.kind", "Pod")}
}

func (e *eventReflector) watch(ctx context.Context, t *twin) ([]toolscache.InformerSynced, error) {
	inf, err := t.cache.GetInformer(ctx, &corev1.Event{}, cache.BlockUntilSynced(false))
	if err != nil {
		return nil, err
	}
	if _, err := inf.AddEventHandler(onEvery(func(o client.Object) {
		e.queue.Add(types.NamespacedName{Namespace: t.local, Name: o.GetName()})
	})); err != nil {
		return nil, err
	}
	return []toolscache.InformerSynced{inf.HasSynced}, nil
}

func (e *eventReflector) enqueueNamespace(ctx context.Context, t *twin) {
	names, err := e.r.names(ctx, t.cache, &corev1.Event{}, t.remote)
	if err != nil {
		e.r.logger.Error(err, "listing for a resync", "kind", Events, "namespace", t.remote)
		return
	}
	for _, name := range names {
		e.queue.Add(types.NamespacedName{Namespace: t.local, Name: name})
	}
}

func (e *eventReflector) forget(local string) { e.metrics.forgetNamespace(local) }

func (e *eventReflector) run(ctx context.Context, workers int) {
	process(ctx, e.queue, workers, e.reconcile, func(key types.NamespacedName, err error) {
		e.metrics.errors.Inc()
		e.r.logger.V(2).Info("reflecting an event failed; retrying", "event", key, "error", err.Error())
	})
	e.metrics.drop()
}

func (e *eventReflector) reconcile(ctx context.Context, key types.NamespacedName) (time.Duration, error) {
	t := e.r.twinOf(key.Namespace)
	if t == nil || !t.kindReady(Events) {
		return 0, nil
	}
	remote := &corev1.Event{}
	if found, err := get(ctx, t.cache, types.NamespacedName{Namespace: t.remote, Name: key.Name}, remote); !found || err != nil {
		// A remote Event that expired leaves its local copy to expire too.
		e.metrics.observe(key, false)
		return 0, err
	}
	local, err := e.r.pods.Pods(key.Namespace).Get(remote.InvolvedObject.Name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	} else if err != nil {
		return 0, err
	}
	want := forge.Event(remote, local, e.r.cfg.ProviderID)
	events := e.events.CoreV1().Events(key.Namespace)
	_, err = events.Create(ctx, want, metav1.CreateOptions{})
	if err == nil {
		e.metrics.operations.WithLabelValues("create").Inc()
		e.metrics.observe(key, true)
		return 0, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return 0, err
	}
	have, err := events.Get(ctx, want.Name, metav1.GetOptions{})
	if err != nil {
		return 0, client.IgnoreNotFound(err)
	}
	if !forge.EventChanged(want, have) {
		return 0, nil
	}
	want.ResourceVersion = have.ResourceVersion
	if _, err := events.Update(ctx, want, metav1.UpdateOptions{}); err != nil {
		return 0, client.IgnoreNotFound(err)
	}
	e.metrics.operations.WithLabelValues("update").Inc()
	return 0, nil
}
