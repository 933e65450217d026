package remotecluster

import (
	"context"
	"fmt"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// CacheOptions say what a namespace cache keeps of each kind.
type CacheOptions struct {
	// Name identifies the options: the users of one namespace who pass the
	// same Name share one cache, so they must pass the same ByObject.
	Name string
	// ByObject restricts or trims kinds as cache.Options.ByObject does;
	// every kind's managed fields are left out (nothing reads them).
	ByObject map[client.Object]cache.ByObject
}

type cacheKey struct{ namespace, options string }

// NamespaceCache is an informer cache of one namespace of the cluster,
// shared by every user who asked for it with the same CacheOptions: one
// watch per kind, whatever the number of users. Read it as a cache.Cache;
// add event handlers with Watch, which removes them when the user goes.
type NamespaceCache struct {
	cache.Cache
	// Namespace is the namespace it holds.
	Namespace string

	refs int
	stop context.CancelFunc
}

// NamespaceCache returns the started cache of namespace kept with opts and
// holds it until ctx is done: the last holder's going stops it, and its
// watches with it. ctx is typically the user's whole lifetime.
func (c *Cluster) NamespaceCache(ctx context.Context, namespace string, opts CacheOptions) (*NamespaceCache, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	key := cacheKey{namespace: namespace, options: opts.Name}
	c.mu.Lock()
	defer c.mu.Unlock()
	nc, ok := c.caches[key]
	if !ok {
		cc, err := cache.New(c.Config, cache.Options{Scheme: c.scheme, HTTPClient: c.HTTPClient, Mapper: c.Mapper,
			DefaultTransform: cache.TransformStripManagedFields(), DefaultNamespaces: map[string]cache.Config{namespace: {}},
			ByObject: opts.ByObject})
		if err != nil {
			return nil, fmt.Errorf("cache of namespace %s on cluster %s: %w", namespace, c.Provider, err)
		}
		// The cache lives as long as its holders, not as any one of them.
		cctx, stop := context.WithCancel(context.Background())
		nc = &NamespaceCache{Cache: cc, Namespace: namespace, stop: stop}
		go func() { _ = cc.Start(cctx) }()
		c.caches[key] = nc
	}
	nc.refs++
	context.AfterFunc(ctx, func() { c.release(key, nc) })
	return nc, nil
}

func (c *Cluster) release(key cacheKey, nc *NamespaceCache) {
	c.mu.Lock()
	defer c.mu.Unlock()
	nc.refs--
	if nc.refs > 0 {
		return
	}
	if c.caches[key] == nc {
		delete(c.caches, key)
	}
	nc.stop()
}

// Caches is the number of namespace caches running.
func (c *Cluster) Caches() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.caches)
}

// Watch adds handler to the informer of obj's kind, starting it if no one
// watched the kind yet, until ctx is done. The returned function reports
// whether the handler has been given the informer's initial list.
func (n *NamespaceCache) Watch(ctx context.Context, obj client.Object, handler toolscache.ResourceEventHandler) (toolscache.InformerSynced, error) {
	inf, err := n.GetInformer(ctx, obj, cache.BlockUntilSynced(false))
	if err != nil {
		return nil, err
	}
	reg, err := inf.AddEventHandler(handler)
	if err != nil {
		return nil, err
	}
	context.AfterFunc(ctx, func() { _ = inf.RemoveEventHandler(reg) })
	return reg.HasSynced, nil
}
