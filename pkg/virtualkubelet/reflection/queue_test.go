package reflection

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"
)

// TestProcessSurvivesPanics: a key whose reconciliation panics is reported
// as failed and retried; the worker goes on with the other keys.
func TestProcessSurvivesPanics(t *testing.T) {
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, 10*time.Millisecond))
	var mu sync.Mutex
	done := map[string]int{}
	var failures []string
	ctx, cancel := context.WithCancel(context.Background())
	reconcile := func(_ context.Context, key string) (time.Duration, error) {
		mu.Lock()
		done[key]++
		n := done[key]
		mu.Unlock()
		if key == "bad" && n < 3 {
			panic("boom: a bad object")
		}
		if key == "bad" && n == 3 {
			cancel()
		}
		return 0, nil
	}
	failed := func(key string, err error) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, key+": "+err.Error())
	}
	queue.Add("bad")
	queue.Add("good")
	finished := make(chan struct{})
	go func() { process(ctx, queue, 1, reconcile, failed); close(finished) }()
	select {
	case <-finished:
	case <-time.After(10 * time.Second):
		t.Fatal("the workers did not get past the panicking key")
	}
	mu.Lock()
	defer mu.Unlock()
	if done["good"] != 1 || done["bad"] != 3 {
		t.Errorf("reconciled %v, want good once and bad three times (two panics, then success)", done)
	}
	if len(failures) != 2 || !strings.Contains(failures[0], "panicked") || !strings.Contains(failures[0], "boom: a bad object") {
		t.Errorf("failures %q, want the two panics reported with their cause", failures)
	}
}

// TestKeyLocks: one key is never held twice at once, other keys do not
// wait for it, and a key's lock is dropped once nobody holds or waits.
func TestKeyLocks(t *testing.T) {
	l := newKeyLocks[string]()
	unlockA := l.lock("a")
	otherDone := make(chan struct{})
	go func() {
		unlock := l.lock("b")
		unlock()
		close(otherDone)
	}()
	select {
	case <-otherDone:
	case <-time.After(5 * time.Second):
		t.Fatal("key b waited for key a")
	}
	var mu sync.Mutex
	holders, most := 0, 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			unlock := l.lock("a")
			mu.Lock()
			holders++
			most = max(most, holders)
			mu.Unlock()
			time.Sleep(time.Millisecond)
			mu.Lock()
			holders--
			mu.Unlock()
			unlock()
		})
	}
	time.Sleep(20 * time.Millisecond)
	mu.Lock()
	if holders != 0 {
		t.Errorf("%d workers hold key a while the first still does", holders)
	}
	mu.Unlock()
	unlockA()
	wg.Wait()
	if most != 1 {
		t.Errorf("key a held by %d at once, want 1", most)
	}
	if len(l.locks) != 0 {
		t.Errorf("%d locks left once nobody holds them", len(l.locks))
	}
}
