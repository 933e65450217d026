package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"time"
)

// settle is how long the hub waits after a change for the changes that
// come with it (a peering touches a dozen objects at once) before it
// rebuilds the picture: one rebuild and one push for the burst.
const settle = 100 * time.Millisecond

// hub rebuilds the picture when a source says something changed and
// pushes it to every subscriber (the pages' event streams). It keeps the
// last picture as JSON, which GET /api/state serves.
type hub struct {
	sources []*source
	kick    chan struct{}
	now     func() time.Time

	mu      sync.Mutex
	body    []byte // the state without Version and Updated, to compare
	state   []byte // the whole state, as served
	version uint64
	subs    map[chan []byte]struct{}
	// ready is closed once the first picture is built.
	ready chan struct{}
}

func newHub(sources []*source) *hub {
	return &hub{sources: sources, kick: make(chan struct{}, 1), now: time.Now, subs: map[chan []byte]struct{}{}, ready: make(chan struct{})}
}

// notify asks for a rebuild; it never blocks, and calls that come while a
// rebuild is pending make no other.
func (h *hub) notify() {
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

// run rebuilds the picture at each notify, until ctx ends.
func (h *hub) run(ctx context.Context) {
	h.rebuild(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.kick:
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(settle):
		}
		select {
		case <-h.kick:
		default:
		}
		h.rebuild(ctx)
	}
}

func (h *hub) rebuild(ctx context.Context) {
	snaps := make([]Snapshot, len(h.sources))
	for i, s := range h.sources {
		snaps[i] = s.snapshot(ctx)
	}
	st := Build(snaps)
	body, err := json.Marshal(st)
	if err != nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state != nil && bytes.Equal(body, h.body) {
		return
	}
	h.version++
	st.Version, st.Updated = h.version, h.now().UTC().Truncate(time.Millisecond)
	full, err := json.Marshal(st)
	if err != nil {
		return
	}
	first := h.state == nil
	h.body, h.state = body, full
	for ch := range h.subs {
		// A subscriber that has not taken the previous picture gets this
		// one instead: only the newest matters.
		select {
		case <-ch:
		default:
		}
		ch <- full
	}
	if first {
		close(h.ready)
	}
}

// current is the last picture, as JSON.
func (h *hub) current() []byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state
}

// subscribe returns a channel that receives the current picture and each
// new one, and the function that ends the subscription.
func (h *hub) subscribe() (<-chan []byte, func()) {
	ch := make(chan []byte, 1)
	h.mu.Lock()
	h.subs[ch] = struct{}{}
	if h.state != nil {
		ch <- h.state
	}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs, ch)
		h.mu.Unlock()
	}
}
