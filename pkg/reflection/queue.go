package reflection

import (
	"context"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
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
	after, err := reconcile(cctx, key)
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
