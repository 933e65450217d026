package replicator

import (
	"context"
	"fmt"
	"sync"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/remotecluster"
)

// TenantCaches names the options of the tenant namespaces' caches on the
// providers: the replicators of every kind share them.
const TenantCaches = "replicator"

// Watches follows, on each provider, the objects of one kind in the
// tenant namespace this cluster owns there (the replicas, or the records
// of Multi-Cluster Services exports), through the provider's shared
// namespace cache: a remote change (a slice accepted, a status update)
// wakes the local controller at once instead of by polling. It is a
// manager Runnable: the watches live as long as the manager, and each
// moves to the provider's new Cluster when the credentials change.
type Watches struct {
	remotes *remotecluster.Registry
	newObj  func() client.Object
	events  chan event.GenericEvent

	mu         sync.Mutex
	ctx        context.Context
	byProvider map[string]*watch
}

type watch struct {
	cluster *remotecluster.Cluster
	stop    context.CancelFunc
}

// NewWatches returns the Watches of the kind newObj makes on the providers
// remotes reaches. Each change there is told as an object of that kind
// named as the remote one, in the local tenant namespace of its provider.
func NewWatches(remotes *remotecluster.Registry, newObj func() client.Object) *Watches {
	return &Watches{remotes: remotes, newObj: newObj, events: make(chan event.GenericEvent, 1024), byProvider: map[string]*watch{}}
}

// Start records the manager's context and, when it ends, stops every watch.
func (w *Watches) Start(ctx context.Context) error {
	w.mu.Lock()
	w.ctx = ctx
	w.mu.Unlock()
	<-ctx.Done()
	w.mu.Lock()
	defer w.mu.Unlock()
	for provider, e := range w.byProvider {
		e.stop()
		delete(w.byProvider, provider)
	}
	return nil
}

// Source feeds a local controller with the remote changes, through h
// (handler.EnqueueRequestForObject for the replicas). Only one Source may
// be made of a Watches: its events go to one controller.
func (w *Watches) Source(h handler.EventHandler) source.Source {
	return source.Channel(w.events, h)
}

// Ensure watches the kind in namespace on c, provider's current Cluster,
// unless it does already.
func (w *Watches) Ensure(provider string, c *remotecluster.Cluster, namespace string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if e, ok := w.byProvider[provider]; ok && e.cluster == c {
		return nil
	}
	if w.ctx == nil {
		return fmt.Errorf("the remote watches are not started yet")
	}
	if old, ok := w.byProvider[provider]; ok {
		old.stop()
	}
	ctx, stop := context.WithCancel(w.ctx)
	nc, err := c.NamespaceCache(ctx, namespace, remotecluster.CacheOptions{Name: TenantCaches})
	if err != nil {
		stop()
		return err
	}
	local := consts.TenantNamespace(provider)
	notify := func(obj any) {
		if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		o, ok := obj.(client.Object)
		if !ok {
			return
		}
		key := w.newObj()
		key.SetNamespace(local)
		key.SetName(o.GetName())
		select {
		case w.events <- event.GenericEvent{Object: key}:
		case <-ctx.Done():
		}
	}
	if _, err := nc.Watch(ctx, w.newObj(), toolscache.ResourceEventHandlerFuncs{
		AddFunc: notify, UpdateFunc: func(_, n any) { notify(n) }, DeleteFunc: notify,
	}); err != nil {
		stop()
		return err
	}
	w.byProvider[provider] = &watch{cluster: c, stop: stop}
	// New credentials: watch again through the new Cluster; if there is
	// none (the peering is going), the next reconcile tries again.
	go func() {
		select {
		case <-c.Stale():
		case <-ctx.Done():
			return
		}
		if next, ns, err := w.remotes.Tenant(ctx, provider); err != nil || w.Ensure(provider, next, ns) != nil {
			w.Forget(provider, c)
		}
	}()
	return nil
}

// Forget stops the watch on provider (through c, or any Cluster if nil).
func (w *Watches) Forget(provider string, c *remotecluster.Cluster) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if e, ok := w.byProvider[provider]; ok && (c == nil || e.cluster == c) {
		e.stop()
		delete(w.byProvider, provider)
	}
}

// Len is the number of providers watched.
func (w *Watches) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.byProvider)
}
