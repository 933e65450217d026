package reflection

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/remotecluster"
)

// reconcileTimeout bounds one reconciliation: a provider that stopped
// answering must not hold a worker forever.
const reconcileTimeout = 30 * time.Second

// process runs workers taking keys off queue until ctx is done, then shuts
// the queue down and waits for them. reconcile returns how long to wait
// before looking at the key again (0: done) or an error, after which the
// key is retried with the queue's backoff and failed is told.
func process[K comparable](ctx context.Context, queue workqueue.TypedRateLimitingInterface[K], workers int,
	reconcile func(context.Context, K) (time.Duration, error), failed func(K, error)) {
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for next(ctx, queue, reconcile, failed) {
			}
		})
	}
	<-ctx.Done()
	queue.ShutDown()
	wg.Wait()
}

func next[K comparable](ctx context.Context, queue workqueue.TypedRateLimitingInterface[K],
	reconcile func(context.Context, K) (time.Duration, error), failed func(K, error)) bool {
	key, quit := queue.Get()
	if quit {
		return false
	}
	defer queue.Done(key)
	cctx, cancel := context.WithTimeout(ctx, reconcileTimeout)
	defer cancel()
	after, err := safely(cctx, key, reconcile)
	switch {
	case err != nil:
		if ctx.Err() == nil {
			failed(key, err)
		}
		queue.AddRateLimited(key)
	case after > 0:
		queue.AddAfter(key, after)
	default:
		queue.Forget(key)
	}
	return true
}

// safely runs reconcile, turning a panic into an error for that key (a
// *panicError): one bad object (a peer sends whatever it likes) must not
// stop the workers of every kind of every virtual node in the process.
func safely[K comparable](ctx context.Context, key K, reconcile func(context.Context, K) (time.Duration, error)) (after time.Duration, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reconciling %v: %w", key, &panicError{value: r, stack: debug.Stack()})
		}
	}()
	return reconcile(ctx, key)
}

// panicError is a reconciliation that panicked. Its key is retried with
// the queue's backoff like any failure, but it is logged as an error with
// its stack and counted apart: a panic is a bug to fix, not a provider
// being slow.
type panicError struct {
	value any
	stack []byte
}

func (e *panicError) Error() string { return fmt.Sprintf("panicked: %v\n%s", e.value, e.stack) }

// reportFailure logs and counts a reconciliation of kind that failed and
// is retried: a panic always, as an error; other failures, expected while
// a provider is unreachable, only at verbosity 2.
func reportFailure(logger klog.Logger, kind string, key types.NamespacedName, err error, errs, panics prometheus.Counter) {
	errs.Inc()
	var p *panicError
	if errors.As(err, &p) {
		panics.Inc()
		logger.Error(err, "reflecting panicked; retrying with backoff", "kind", kind, "object", key)
		return
	}
	logger.V(2).Info("reflecting failed; retrying", "kind", kind, "object", key, "error", err.Error())
}

// hooked runs cfg's beforeReconcile, if any, ahead of reconcile, inside
// the worker's recovery.
func hooked(cfg *Config, kind string, reconcile func(context.Context, types.NamespacedName) (time.Duration, error)) func(context.Context, types.NamespacedName) (time.Duration, error) {
	if cfg.beforeReconcile == nil {
		return reconcile
	}
	return func(ctx context.Context, key types.NamespacedName) (time.Duration, error) {
		cfg.beforeReconcile(kind, key)
		return reconcile(ctx, key)
	}
}

// kindQueue is what every reflected kind has: the queue of its keys (the
// local namespace and the local object's name), its metrics, and the
// provider's part it serves.
type kindQueue struct {
	name    string
	r       *providerReflection
	queue   workqueue.TypedRateLimitingInterface[types.NamespacedName]
	metrics *kindMetrics
}

func newKindQueue(r *providerReflection, name string) kindQueue {
	return kindQueue{name: name, r: r,
		queue:   newQueue[types.NamespacedName]("reflection-" + name + "-" + r.cfg.ProviderID),
		metrics: newKindMetrics(r.cfg.ProviderID, name),
	}
}

// newQueue is a reflection work queue: a key that failed is retried after
// 5 ms, doubling up to 30 s, each key on its own. There is no overall retry
// budget (client-go's default controller limiter adds one of 10 a second,
// shared by all keys): when many keys fail at once, as a burst of pods
// meets a provider refusing or timing out, their retries must not queue
// behind one another for seconds.
func newQueue[K comparable](name string) workqueue.TypedRateLimitingInterface[K] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[K](5*time.Millisecond, 30*time.Second),
		workqueue.TypedRateLimitingQueueConfig[K]{Name: name})
}

// follow enqueues, for every event on an object of obj's kind in c, the
// key localName(its name) in the twin's local namespace.
func (q *kindQueue) follow(ctx context.Context, t *twin, c *remotecluster.NamespaceCache, obj client.Object, localName func(string) string) (toolscache.InformerSynced, error) {
	return c.Watch(ctx, obj, onEvery(func(o client.Object) {
		q.queue.Add(types.NamespacedName{Namespace: t.local, Name: localName(o.GetName())})
	}))
}

// enqueueAll enqueues, for every object of obj's kind in namespace ns of
// c, the key localName(its name) in the twin's local namespace.
func (q *kindQueue) enqueueAll(ctx context.Context, t *twin, c cache.Cache, obj client.Object, ns string, localName func(string) string) {
	names, err := q.r.names(ctx, c, obj, ns)
	if err != nil {
		q.r.logger.Error(err, "listing for a resync", "kind", q.name, "namespace", ns)
		return
	}
	for _, name := range names {
		q.queue.Add(types.NamespacedName{Namespace: t.local, Name: localName(name)})
	}
}

func (q *kindQueue) forget(local string) { q.metrics.forgetNamespace(local) }

// work runs the kind's workers until ctx is done, then drops its metrics.
func (q *kindQueue) work(ctx context.Context, workers int, reconcile func(context.Context, types.NamespacedName) (time.Duration, error)) {
	process(ctx, q.queue, workers, hooked(&q.r.cfg, q.name, reconcile), func(key types.NamespacedName, err error) {
		reportFailure(q.r.logger, q.name, key, err, q.metrics.errors, q.metrics.panics)
	})
	q.metrics.drop()
}

// keyLocks hands out one mutex per key, for as long as someone holds or
// waits for it: two queues whose workers reconcile the same keys must not
// reconcile one key at once, and a lock per key (not per stripe of keys)
// keeps a slow key from holding up others.
type keyLocks[K comparable] struct {
	mu    sync.Mutex
	locks map[K]*keyLock
}

type keyLock struct {
	sync.Mutex
	users int
}

func newKeyLocks[K comparable]() *keyLocks[K] { return &keyLocks[K]{locks: map[K]*keyLock{}} }

// lock locks key's mutex and returns its unlock.
func (l *keyLocks[K]) lock(key K) (unlock func()) {
	l.mu.Lock()
	k := l.locks[key]
	if k == nil {
		k = &keyLock{}
		l.locks[key] = k
	}
	k.users++
	l.mu.Unlock()
	k.Lock()
	return func() {
		k.Unlock()
		l.mu.Lock()
		if k.users--; k.users == 0 {
			delete(l.locks, key)
		}
		l.mu.Unlock()
	}
}
