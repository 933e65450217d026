package gateway

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"
)

// fakeTunnel counts the sessions redial starts; its peer is set by the test.
type fakeTunnel struct {
	mu      sync.Mutex
	peer    bool
	started []time.Time
}

func (f *fakeTunnel) Rehandshake() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started = append(f.started, time.Now())
	return nil
}

func (f *fakeTunnel) HasPeer() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.peer
}

func (f *fakeTunnel) sessions() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.started...)
}

// TestRedialBeforeFirstAnswer: a client whose tunnel has no peer yet starts
// no session; once it has one and no answer comes, it starts sessions over
// half a second after, then a second after that (not WireGuard's 5 s); once
// an answer came, it leaves the session alone.
func TestRedialBeforeFirstAnswer(t *testing.T) {
	check := &Checker{Interval: 400 * time.Millisecond, Lost: 5}
	tun := &fakeTunnel{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { redial(ctx, check, tun); close(done) }()

	time.Sleep(700 * time.Millisecond)
	if n := len(tun.sessions()); n != 0 {
		t.Fatalf("%d sessions started without a peer", n)
	}
	tun.mu.Lock()
	tun.peer = true
	tun.mu.Unlock()
	peered := time.Now()
	time.Sleep(3500 * time.Millisecond)
	s := tun.sessions()
	if len(s) < 2 {
		t.Fatalf("%d sessions started in 3.5 s with a peer and no answer, want 3 (after 0.5, 1.5 and 3.5 s)", len(s))
	}
	if d := s[0].Sub(peered); d < firstRedial-100*time.Millisecond {
		t.Fatalf("first session started %v after the peer, before %v", d, firstRedial)
	}
	if d := s[1].Sub(s[0]); d < 2*firstRedial-100*time.Millisecond {
		t.Fatalf("second session %v after the first, want %v", d, 2*firstRedial)
	}

	// An answer: the tunnel is up, nothing more to start.
	check.mu.Lock()
	check.health.LastAnswer = time.Now().Add(time.Hour) // answered, and stays recent
	check.mu.Unlock()
	before := len(tun.sessions())
	time.Sleep(1500 * time.Millisecond)
	if n := len(tun.sessions()); n != before {
		t.Fatalf("%d sessions started while answers came", n-before)
	}
	cancel()
	<-done
}

// TestCheckerAnswered: a peer that starts after the first ping is answered
// within a few FirstIntervals, not a whole Interval later, and Answered is
// closed then.
func TestCheckerAnswered(t *testing.T) {
	a := &Checker{Local: net.IPv4(127, 0, 0, 23), Peer: net.IPv4(127, 0, 0, 24), Interval: 10 * time.Second, Lost: 3}
	b := &Checker{Local: net.IPv4(127, 0, 0, 24), Peer: net.IPv4(127, 0, 0, 23), Interval: 10 * time.Second, Lost: 3}
	if got := a.FirstInterval(); got != a.Interval/8 {
		t.Fatalf("FirstInterval %v, want Interval/8", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = a.Run(ctx) }()
	select {
	case <-a.Answered():
		t.Fatal("answered before the peer runs")
	case <-time.After(300 * time.Millisecond):
	}
	go func() { _ = b.Run(ctx) }()
	select {
	case <-a.Answered():
	case <-time.After(4 * time.Second):
		t.Fatalf("no answer 4 s after the peer started (Interval %v): %+v", a.Interval, a.Health())
	}
	if !a.Health().Connected {
		t.Fatalf("answered but not connected: %+v", a.Health())
	}
}
