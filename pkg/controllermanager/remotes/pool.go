// Package remotes keeps one client per provider, built from the consumer's
// Identity, and watches chosen kinds in the consumer's tenant namespace on
// each provider so that remote changes (a slice accepted, a status update)
// wake the local controllers at once instead of by polling.
package remotes

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/liqo-go/liqo/pkg/remote"
)

// ToLocal maps a remote object of provider to the local object whose
// controller must run.
type ToLocal func(provider string, remote client.Object) types.NamespacedName

// Pool is a manager Runnable: its remote watches live as long as the manager.
type Pool struct {
	scheme  *runtime.Scheme
	clients *remote.Clients
	kinds   []client.Object
	toLocal ToLocal
	events  chan event.GenericEvent

	mu      sync.Mutex
	ctx     context.Context
	entries map[string]*entry
}

type entry struct {
	version string
	stop    context.CancelFunc
	// done is closed once the provider's watches have stopped.
	done chan struct{}
}

// NewPool returns a pool watching kinds on every provider it is asked for;
// reader reads the local Identities and their Secrets.
func NewPool(scheme *runtime.Scheme, reader client.Reader, toLocal ToLocal, kinds ...client.Object) *Pool {
	return &Pool{scheme: scheme, clients: &remote.Clients{Reader: reader, Scheme: scheme}, kinds: kinds, toLocal: toLocal,
		events: make(chan event.GenericEvent, 1024), entries: map[string]*entry{}}
}

// Start records the manager's context and, when it ends, stops every watch.
func (p *Pool) Start(ctx context.Context) error {
	p.mu.Lock()
	p.ctx = ctx
	p.mu.Unlock()
	<-ctx.Done()
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, e := range p.entries {
		e.stop()
		delete(p.entries, id)
	}
	return nil
}

// Source feeds the local controller with the remote changes.
func (p *Pool) Source() source.Source {
	return source.Channel(p.events, &handler.EnqueueRequestForObject{})
}

// Client returns the client for provider and the namespace this cluster owns
// there, (re)starting the watches when the credentials changed.
func (p *Pool) Client(ctx context.Context, provider string) (client.Client, string, error) {
	conn, err := p.clients.Get(ctx, provider)
	if err != nil {
		if apierrors.IsNotFound(err) {
			// The peering is gone: its watches and goroutines go with it.
			p.Forget(provider)
		}
		return nil, "", err
	}
	r := conn.Remote
	p.mu.Lock()
	defer p.mu.Unlock()
	if e, ok := p.entries[provider]; ok && e.version == r.Version {
		return conn.Client, r.Namespace, nil
	}
	if p.ctx == nil {
		return nil, "", fmt.Errorf("the remote pool is not started yet")
	}
	if old, ok := p.entries[provider]; ok {
		old.stop()
	}
	wctx, stop := context.WithCancel(p.ctx)
	done, err := p.watch(wctx, provider, r)
	if err != nil {
		stop()
		return nil, "", err
	}
	p.entries[provider] = &entry{version: r.Version, stop: stop, done: done}
	return conn.Client, r.Namespace, nil
}

// Len is the number of providers the pool holds a client and watches for.
func (p *Pool) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.entries)
}

// Forget stops the watches on provider, once the peering is gone.
func (p *Pool) Forget(provider string) {
	p.clients.Forget(provider)
	p.mu.Lock()
	defer p.mu.Unlock()
	if e, ok := p.entries[provider]; ok {
		e.stop()
		delete(p.entries, provider)
	}
}

// watch starts the watches of p's kinds on provider until ctx is done; the
// channel it returns is closed once they have stopped.
func (p *Pool) watch(ctx context.Context, provider string, r *remote.Remote) (chan struct{}, error) {
	done := make(chan struct{})
	if len(p.kinds) == 0 {
		close(done)
		return done, nil
	}
	c, err := cache.New(r.Config, cache.Options{Scheme: p.scheme, DefaultTransform: cache.TransformStripManagedFields(),
		DefaultNamespaces: map[string]cache.Config{r.Namespace: {}}})
	if err != nil {
		return nil, err
	}
	notify := func(obj any) {
		o, ok := obj.(client.Object)
		if !ok {
			if tomb, isTomb := obj.(toolscache.DeletedFinalStateUnknown); isTomb {
				o, ok = tomb.Obj.(client.Object)
			}
		}
		if !ok {
			return
		}
		key := p.toLocal(provider, o)
		local := o.DeepCopyObject().(client.Object)
		local.SetNamespace(key.Namespace)
		local.SetName(key.Name)
		select {
		case p.events <- event.GenericEvent{Object: local}:
		case <-ctx.Done():
		}
	}
	for _, kind := range p.kinds {
		inf, err := c.GetInformer(ctx, kind, cache.BlockUntilSynced(false))
		if err != nil {
			return nil, err
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    notify,
			UpdateFunc: func(_, n any) { notify(n) },
			DeleteFunc: notify,
		}); err != nil {
			return nil, err
		}
	}
	go func() {
		defer close(done)
		_ = c.Start(ctx)
	}()
	return done, nil
}
