package reflection

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/storage"
)

// PersistentVolumeClaims is the kind name of the volume status reflection,
// which runs the other way, like the Events': the capacity of the
// provider's PVCs behind the storage fabric's remote volumes is shown on
// the local PVCs and their PVs.
const PersistentVolumeClaims = "persistentvolumeclaims"

// volumeReflector watches the PVCs the storage fabric made in the twin
// namespaces and hands each change to storage.SyncRemoteCapacity, which
// decides what the local side shows: the reflection has the twins' watches,
// the storage package knows its volumes. Keys are the local namespace and
// the PVC's name (the same on both sides).
type volumeReflector struct {
	kindQueue
}

// notBoundRetry is how soon a remote PVC bound before its local PVC is
// looked at again: nothing here watches the local PVC's binding.
const notBoundRetry = 2 * time.Second

func newVolumeReflector(r *providerReflection) *volumeReflector {
	return &volumeReflector{kindQueue: newKindQueue(r, PersistentVolumeClaims)}
}

// remoteCache keeps the PVCs the storage fabric made: they carry
// managed-by but no origin cluster (the provisioner does not know the local
// cluster's ID), and a twin namespace has one consumer anyway.
func (v *volumeReflector) remoteCache(labels.Selector) (client.Object, cache.ByObject) {
	return &corev1.PersistentVolumeClaim{}, cache.ByObject{Label: labels.SelectorFromSet(labels.Set{consts.ManagedByLabel: consts.ManagedByValue})}
}

func (v *volumeReflector) watch(ctx context.Context, t *twin) ([]toolscache.InformerSynced, error) {
	synced, err := v.follow(ctx, t, t.cache, &corev1.PersistentVolumeClaim{}, identity)
	if err != nil {
		return nil, err
	}
	return []toolscache.InformerSynced{synced}, nil
}

func (v *volumeReflector) enqueueNamespace(ctx context.Context, t *twin) {
	v.enqueueAll(ctx, t, t.cache, &corev1.PersistentVolumeClaim{}, t.remote, identity)
}

func (v *volumeReflector) run(ctx context.Context, workers int) { v.work(ctx, workers, v.reconcile) }

func (v *volumeReflector) reconcile(ctx context.Context, key types.NamespacedName) (time.Duration, error) {
	t := v.r.twinOf(key.Namespace)
	if t == nil || !t.kindReady(PersistentVolumeClaims) {
		return 0, nil
	}
	remote := &corev1.PersistentVolumeClaim{}
	if found, err := get(ctx, t.cache, types.NamespacedName{Namespace: t.remote, Name: key.Name}, remote); !found || err != nil {
		return 0, err
	}
	q, err := storage.SyncRemoteCapacity(ctx, v.r.cfg.Local, key.Namespace, v.r.cfg.ProviderID, t.remote, remote)
	var refused *storage.CapacityRefusal
	switch {
	case errors.Is(err, storage.ErrNotBoundYet):
		return notBoundRetry, nil
	case errors.As(err, &refused):
		v.event(ctx, key, corev1.EventTypeWarning, "RemoteCapacityRefused", refused.Error())
		return 0, nil
	case err != nil:
		return 0, err
	case q != nil:
		v.metrics.operations.WithLabelValues("update").Inc()
		v.event(ctx, key, corev1.EventTypeNormal, "RemoteCapacity",
			"the volume on cluster "+v.r.cfg.ProviderID+" is bound with "+q.String())
	}
	return 0, nil
}

// event records an Event on the local PVC of key, if it is still there.
func (v *volumeReflector) event(ctx context.Context, key types.NamespacedName, kind, reason, msg string) {
	local, err := v.r.cfg.Local.CoreV1().PersistentVolumeClaims(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	if err != nil {
		return
	}
	v.r.cfg.Recorder.Event(local, kind, reason, msg)
}
