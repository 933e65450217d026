package quota

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

// DefaultReservationTTL is how long an admitted object counts against its
// quota before the informer shows it stored. It outlives any API request:
// a reservation left by a create that failed after admission (a name
// already taken, a later webhook refusing) then lapses.
const DefaultReservationTTL = 2 * time.Minute

// Ledger keeps every consumer's usage in memory, so that admitting an
// object is one atomic check-and-reserve. Checking against a sum listed
// from the cache instead would let a burst of concurrent creates all pass
// against the same stale total. K names an object: ShadowPods are counted
// by namespace and name (Ledger[types.NamespacedName], the Quotas), the
// objects of every kind a consumer writes by kind too (Ledger[objectKey],
// the object budget).
//
// Stored objects enter it through Observe and leave through Forget (the
// informer's events); Reserve adds admitted ones that are not stored yet.
// A ShadowPod whose pod is still terminating when it goes keeps counting
// until the pod is gone (Forget's podAlive, then Release): a pod runs, and
// holds the provider's resources, until the end of its grace period, and a
// consumer deleting a ShadowPod must not get its quota back before then.
// It is safe for concurrent use.
type Ledger[K comparable] struct {
	// TTL of reservations; DefaultReservationTTL if zero.
	TTL time.Duration
	// Now is the clock; time.Now if nil.
	Now func() time.Time
	// OnChange, if set, is called with a consumer whose stored usage
	// changed. It is called with the ledger locked and must not block.
	OnChange func(consumer string)

	mu       sync.Mutex
	accounts map[string]*account[K]
	// lingering are the deleted ShadowPods whose pods still exist, by the
	// ShadowPod's UID (the pod's controller): their usage stays in their
	// account's total until Release.
	lingering map[types.UID]lingering
}

type lingering struct {
	consumer string
	usage    Usage
}

type account[K comparable] struct {
	stored map[K]Usage
	// total is the sum of stored, kept as ShadowPods come and go: an
	// admission then costs the few reservations in flight, not a walk of
	// every stored ShadowPod (a burst of N creates was N² additions of
	// quantities, the provider manager's largest cost at N = 10,000).
	total    Usage
	reserved map[K]reservation
	// last is the usage stored last. The ShadowPods of one workload ask
	// alike and come in a row: they share its copy (stored usages are
	// never changed), which at 10,000 pods saved 6 MB of heap.
	last Usage
}

type reservation struct {
	usage   Usage
	expires time.Time
}

func (l *Ledger[K]) account(consumer string) *account[K] {
	if l.accounts == nil {
		l.accounts = map[string]*account[K]{}
	}
	a := l.accounts[consumer]
	if a == nil {
		a = &account[K]{stored: map[K]Usage{}, reserved: map[K]reservation{}}
		l.accounts[consumer] = a
	}
	return a
}

func (l *Ledger[K]) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// Observe records a stored object, replacing its reservation.
func (l *Ledger[K]) Observe(consumer string, key K, u Usage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.account(consumer)
	delete(a.reserved, key)
	if old, ok := a.stored[key]; ok {
		if old.Equal(u) {
			return
		}
		a.total.sub(old)
	}
	if a.last.Equal(u) {
		u = a.last
	} else {
		a.last = u
	}
	a.stored[key] = u
	a.total.add(u)
	l.changed(consumer)
}

// Forget removes a deleted object, whose UID is uid. If podAlive (nil:
// never; only ShadowPods have pods) reports its pod still there, the
// ShadowPod's usage keeps counting until Release(uid). podAlive is called
// with the ledger locked, so that a Release for a pod that went meanwhile
// cannot come before the usage is kept: it must read what Release's caller reads (the same informer's
// cache, updated before Release is called) and must not block.
func (l *Ledger[K]) Forget(consumer string, key K, uid types.UID, podAlive func() bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.account(consumer)
	old, ok := a.stored[key]
	if !ok {
		return
	}
	delete(a.stored, key)
	if uid != "" && podAlive != nil && podAlive() {
		// Still in total, out of stored: a new ShadowPod of the same name
		// is counted besides it, never instead of it.
		if l.lingering == nil {
			l.lingering = map[types.UID]lingering{}
		}
		l.lingering[uid] = lingering{consumer: consumer, usage: old}
		return
	}
	a.total.sub(old)
	l.changed(consumer)
}

// Release stops counting the deleted ShadowPod of UID uid, whose pod is
// gone; it does nothing for a ShadowPod not kept by Forget.
func (l *Ledger[K]) Release(uid types.UID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	g, ok := l.lingering[uid]
	if !ok {
		return
	}
	delete(l.lingering, uid)
	l.account(g.consumer).total.sub(g.usage)
	l.changed(g.consumer)
}

func (l *Ledger[K]) changed(consumer string) {
	if l.OnChange != nil {
		l.OnChange(consumer)
	}
}

// Reserve admits u for key if, with the consumer's other stored and
// reserved objects, it fits limit; key's own stored usage does not
// count. It returns the *ExceededError of Limit.Check otherwise.
func (l *Ledger[K]) Reserve(consumer string, key K, u Usage, limit Limit) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.account(consumer)
	if err := limit.Check(a.usage(key, l.now()), u); err != nil {
		return err
	}
	a.reserved[key] = reservation{usage: u, expires: l.now().Add(l.ttl())}
	return nil
}

// Check tells, as Reserve does, whether u fits for key, and reserves
// nothing: the answer to a dry run.
func (l *Ledger[K]) Check(consumer string, key K, u Usage, limit Limit) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return limit.Check(l.account(consumer).usage(key, l.now()), u)
}

func (l *Ledger[K]) ttl() time.Duration {
	if l.TTL > 0 {
		return l.TTL
	}
	return DefaultReservationTTL
}

// Stored is the usage of the consumer's stored objects.
func (l *Ledger[K]) Stored(consumer string) Usage {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.account(consumer).total.clone()
}

// usage sums the account without except (the lingering ShadowPods, in
// total, always count), dropping lapsed reservations. A
// key both stored and reserved counts the larger of the two, resource by
// resource: such a reservation is a create under a name already taken
// (which the API server refuses after admission) or one racing the deletion
// of the stored ShadowPod, and neither may lower what the stored one counts
// while it exists.
func (a *account[K]) usage(except K, now time.Time) Usage {
	u := a.total.clone()
	if s, stored := a.stored[except]; stored {
		u.sub(s)
	}
	for key, r := range a.reserved {
		if now.After(r.expires) {
			delete(a.reserved, key)
			continue
		}
		if key == except {
			continue
		}
		if s, stored := a.stored[key]; stored {
			// total has s: the larger of the two is s and what r asks
			// beyond it.
			u.add(Usage{Requests: excess(r.usage.Requests, s.Requests), Limits: excess(r.usage.Limits, s.Limits)})
			continue
		}
		u.add(r.usage)
	}
	return u
}

// WaitSynced waits, within the request's deadline, until synced: a ledger
// holds every stored object of its kinds (what, for the error). Admitting
// against a partial sum would overcommit.
func WaitSynced(ctx context.Context, synced func() bool, what string) error {
	if synced() {
		return nil
	}
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) { return synced(), nil })
	if err != nil {
		return fmt.Errorf("the webhook is starting and has not loaded %s yet: retry", what)
	}
	return nil
}
