package budget

import (
	"sync/atomic"
)

// Report shows each consumer's ObjectBudget usage, as the webhooks'
// ledger counts it, to the controller that writes it into the consumer's
// Tenant: one count, the one admissions are checked against. Watch fills
// it; until then it reports nothing. It is safe for
// concurrent use.
type Report struct {
	guard  atomic.Pointer[Guard]
	notify atomic.Pointer[func(consumer string)]
}

// Usage is one consumer's usage of its ObjectBudget, and the budget.
type Usage struct {
	// Bytes and Objects are what its stored objects take.
	Bytes, Objects int64
	// MaxBytes and MaxObjects are the budget.
	MaxBytes, MaxObjects int64
}

// Usage is consumer's usage, false until the webhooks are set up.
func (r *Report) Usage(consumer string) (Usage, bool) {
	g := r.guard.Load()
	if g == nil {
		return Usage{}, false
	}
	stored := g.ledger.Stored(consumer).Requests
	bytes, count := stored[objectBytes], stored[objectCount]
	return Usage{Bytes: bytes.Value(), Objects: count.Value(), MaxBytes: g.budget.MaxBytes.Value(), MaxObjects: g.budget.MaxCount}, true
}

// Notify has fn called with every consumer whose usage changes, from then
// on. fn must not block: it is called with the ledger locked.
func (r *Report) Notify(fn func(consumer string)) { r.notify.Store(&fn) }

// changed is the ledger's OnChange.
func (r *Report) changed(consumer string) {
	if fn := r.notify.Load(); fn != nil {
		(*fn)(consumer)
	}
}
