package gateway

import (
	"context"
	"net"
	"testing"
	"time"
)

// TestChecker: two checkers on loopback addresses see each other connected,
// then with a latency; when one stops, the other turns disconnected after Lost
// intervals.
func TestChecker(t *testing.T) {
	a := &Checker{Local: net.IPv4(127, 0, 0, 21), Peer: net.IPv4(127, 0, 0, 22), Interval: 50 * time.Millisecond, Lost: 3}
	b := &Checker{Local: net.IPv4(127, 0, 0, 22), Peer: net.IPv4(127, 0, 0, 21), Interval: 50 * time.Millisecond, Lost: 3}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	bctx, stopB := context.WithCancel(ctx)
	go func() { _ = a.Run(ctx) }()
	go func() { _ = b.Run(bctx) }()
	deadline := time.Now().Add(5 * time.Second)
	for !a.Health().Connected || !b.Health().Connected {
		if time.Now().After(deadline) {
			t.Fatalf("not connected: a %+v b %+v", a.Health(), b.Health())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The first answer's round trip is not a latency (through a real
	// tunnel it waited for the handshake): the next ones are.
	for a.Health().Latency == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no latency after the first answer: %+v", a.Health())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if l := a.Health().Latency; l <= 0 || l > time.Second {
		t.Fatalf("latency %v", l)
	}
	stopB()
	deadline = time.Now().Add(5 * time.Second)
	for a.Health().Connected {
		if time.Now().After(deadline) {
			t.Fatal("still connected to a stopped peer")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
