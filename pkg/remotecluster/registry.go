package remotecluster

import (
	"context"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Registry keeps the current Cluster of every set of credentials this
// cluster holds on its providers, by kubeconfig Secret: a provider's
// Identity and the VirtualNodes that name the Identity's Secret share one
// Cluster. It is safe for concurrent use.
type Registry struct {
	// reader reads the local Identities and kubeconfig Secrets, fresh: a
	// credentials change must be seen at once.
	reader client.Reader
	opts   Options

	mu       sync.Mutex
	clusters map[types.NamespacedName]*Cluster
}

// NewRegistry returns a Registry reading the credentials with reader (an
// API reader: the manager's cache keeps no Secret's data).
func NewRegistry(reader client.Reader, o Options) *Registry {
	return &Registry{reader: reader, opts: o, clusters: map[types.NamespacedName]*Cluster{}}
}

// Get returns the current Cluster of provider, reached with the
// credentials of this cluster's Identity there. A peering that is gone
// (no Identity, no Secret) is forgotten and its Clusters marked stale.
func (r *Registry) Get(ctx context.Context, provider string) (*Cluster, error) {
	c, _, err := r.Tenant(ctx, provider)
	return c, err
}

// Tenant is Get, and also returns the tenant namespace this cluster owns
// on provider (the Identity's).
func (r *Registry) Tenant(ctx context.Context, provider string) (*Cluster, string, error) {
	secret, namespace, err := identityOf(ctx, r.reader, provider)
	if err != nil {
		if apierrors.IsNotFound(err) {
			r.Forget(provider)
		}
		return nil, "", err
	}
	c, err := r.ForSecret(ctx, provider, secret)
	return c, namespace, err
}

// ForSecret returns the current Cluster of provider reached with the
// kubeconfig in the local Secret key (a VirtualNode's credentials): the
// one already built if the Secret has not changed since, else a new one,
// and the one it replaces is marked stale.
func (r *Registry) ForSecret(ctx context.Context, provider string, key types.NamespacedName) (*Cluster, error) {
	cfg, version, err := fromSecret(ctx, r.reader, key)
	if err != nil {
		if apierrors.IsNotFound(err) {
			r.drop(key)
		}
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.clusters[key]; ok && c.Version == version && c.Provider == provider {
		return c, nil
	}
	c, err := New(provider, version, cfg, r.opts)
	if err != nil {
		return nil, err
	}
	if old, ok := r.clusters[key]; ok {
		old.markStale()
	}
	r.clusters[key] = c
	return c, nil
}

// Forget marks every Cluster of provider stale and drops it: the peering
// is gone.
func (r *Registry) Forget(provider string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, c := range r.clusters {
		if c.Provider == provider {
			c.markStale()
			delete(r.clusters, key)
		}
	}
}

func (r *Registry) drop(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.clusters[key]; ok {
		c.markStale()
		delete(r.clusters, key)
	}
}

// Len is the number of current Clusters.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.clusters)
}

// SecretHandler tells the Registry of every change of a local Secret (an
// informer's handler, on the manager's cache): a kubeconfig Secret
// updated to another version or deleted marks its Cluster stale at once,
// so that its long-lived users (virtual nodes, remote watches) move to
// the new credentials without waiting to look again.
func (r *Registry) SecretHandler() toolscache.ResourceEventHandler {
	changed := func(obj any) {
		if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		o, ok := obj.(client.Object)
		if !ok {
			return
		}
		key := client.ObjectKeyFromObject(o)
		r.mu.Lock()
		c, ok := r.clusters[key]
		r.mu.Unlock()
		if ok && (newer(o.GetResourceVersion(), c.Version) || !o.GetDeletionTimestamp().IsZero()) {
			r.drop(key)
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, n any) { changed(n) },
		DeleteFunc: func(o any) { r.drop(keyOf(o)) },
		AddFunc:    changed,
	}
}

// newer reports whether resource version a is past b. Resource versions
// are opaque, but integers on every API server there is: an event the
// cache delivers late, older than the version a Cluster was built from,
// must not mark that Cluster stale.
func newer(a, b string) bool {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	if errA != nil || errB != nil {
		return a != b
	}
	return x > y
}

func keyOf(obj any) types.NamespacedName {
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	if o, ok := obj.(client.Object); ok {
		return client.ObjectKeyFromObject(o)
	}
	return types.NamespacedName{}
}
