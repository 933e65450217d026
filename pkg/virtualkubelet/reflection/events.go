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
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/clientcfg"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/forge"
)

// Events is the kind name of the event reflection, which runs the other
// way: the Events of the provider's pods and PVCs are copied onto the
// local pods and PVCs.
const Events = "events"

// eventReflector copies the Events of the pods and PVCs in the twin
// namespaces onto the local pods they run for and the local PVCs their
// volumes back (the storage fabric's remote volumes). Keys are the local
// namespace and the remote Event's name.
type eventReflector struct {
	kindQueue
	// events writes the copies at a kubelet's event rate: they are best
	// effort, and must not take the API server from the pods.
	events kubernetes.Interface
}

// eventQPS and eventBurst are a kubelet's defaults for its Events.
const eventQPS, eventBurst = 50, 100

func newEventReflector(r *providerReflection) (*eventReflector, error) {
	cfg := rest.CopyConfig(r.cfg.LocalCluster.Config)
	cfg.QPS, cfg.Burst = eventQPS, eventBurst
	cs, err := kubernetes.NewForConfig(clientcfg.Protobuf(cfg))
	if err != nil {
		return nil, err
	}
	return &eventReflector{kindQueue: newKindQueue(r, Events), events: cs}, nil
}

// remoteCache leaves out the Events about the shadows, the provider's
// answers to the consumer's objects, which are many (one per pod) and
// about no local object: field selectors cannot say "Pod or
// PersistentVolumeClaim", the kinds reconcile copies. It also leaves out
// the provider scheduler's Scheduled, one per pod: the local pod has its
// own (to the virtual node), the provider's nodes are the provider's
// business, and copying it cost the consumer's API server a write per pod.
// Why a pod cannot be scheduled there (FailedScheduling) is still copied.
func (e *eventReflector) remoteCache(labels.Selector) (client.Object, cache.ByObject) {
	return &corev1.Event{}, cache.ByObject{Field: fields.AndSelectors(
		fields.OneTermNotEqualSelector("involvedObject.kind", "ShadowPod"),
		fields.OneTermNotEqualSelector("involvedObject.kind", "ShadowEndpointSlice"),
		fields.OneTermNotEqualSelector("reason", ReasonScheduled))}
}

// ReasonScheduled is the reason of the scheduler's Event binding a pod to
// a node.
const ReasonScheduled = "Scheduled"

func (e *eventReflector) watch(ctx context.Context, t *twin) ([]toolscache.InformerSynced, error) {
	synced, err := e.follow(ctx, t, t.cache, &corev1.Event{}, identity)
	if err != nil {
		return nil, err
	}
	return []toolscache.InformerSynced{synced}, nil
}

func (e *eventReflector) enqueueNamespace(ctx context.Context, t *twin) {
	e.enqueueAll(ctx, t, t.cache, &corev1.Event{}, t.remote, identity)
}

func (e *eventReflector) run(ctx context.Context, workers int) { e.work(ctx, workers, e.reconcile) }

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
	var local metav1.Object
	var err error
	switch remote.InvolvedObject.Kind {
	case "Pod":
		if pod := e.r.podOfNodes(key.Namespace, remote.InvolvedObject.Name); pod != nil {
			local = pod
		} else {
			err = apierrors.NewNotFound(corev1.Resource("pods"), remote.InvolvedObject.Name)
		}
	case "PersistentVolumeClaim":
		// Few, and only for remote volumes: read, not cached.
		local, err = e.events.CoreV1().PersistentVolumeClaims(key.Namespace).Get(ctx, remote.InvolvedObject.Name, metav1.GetOptions{})
	default:
		return 0, nil
	}
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
