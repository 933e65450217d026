package gateway

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// CheckPort is the UDP port of the connection check, on the tunnel
// addresses only: it never leaves the tunnel.
const CheckPort = 12345

// Health is what the connection check knows of the tunnel.
type Health struct {
	// Connected: an answer arrived within the last Lost intervals.
	Connected bool
	// Latency is the round trip of the last answer.
	Latency time.Duration
	// LastAnswer is when it arrived; zero if none ever did.
	LastAnswer time.Time
}

// Checker sends a ping through the tunnel every Interval and answers the
// peer's pings; the peer is connected while answers come back. Its packets
// are 9 bytes: a kind (ping or pong) and the ping's send time, which the
// pong echoes, so the latency needs no clock shared with the peer.
type Checker struct {
	Local, Peer net.IP
	Interval    time.Duration
	// Lost is how many intervals without an answer make the peer
	// unreachable.
	Lost int

	mu     sync.Mutex
	health Health
	// answered is closed at the first answer (Answered).
	answered chan struct{}
}

// FirstInterval is the ping interval until the first answer: a tunnel
// coming up is noticed within it, rather than within Interval.
func (c *Checker) FirstInterval() time.Duration { return c.Interval / 8 }

// Answered is closed when the first answer arrives.
func (c *Checker) Answered() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.answeredLocked()
}

// answeredLocked is the answered channel, made on first use; c.mu is held.
func (c *Checker) answeredLocked() chan struct{} {
	if c.answered == nil {
		c.answered = make(chan struct{})
	}
	return c.answered
}

const (
	ping byte = 1
	pong byte = 2
)

// Health returns what the check knows now.
func (c *Checker) Health() Health {
	c.mu.Lock()
	defer c.mu.Unlock()
	h := c.health
	h.Connected = !h.LastAnswer.IsZero() && time.Since(h.LastAnswer) < time.Duration(c.Lost)*c.Interval
	return h
}

// Run checks until ctx ends. The socket is bound to the tunnel address,
// so it exists only while the tunnel does; Run retries binding until then,
// every FirstInterval: the gateway opens the tunnel at about the time Run
// starts, and the peering waits for the first answer.
func (c *Checker) Run(ctx context.Context) error {
	var conn *net.UDPConn
	if err := wait.PollUntilContextCancel(ctx, c.FirstInterval(), true, func(context.Context) (bool, error) {
		var err error
		conn, err = net.ListenUDP("udp4", &net.UDPAddr{IP: c.Local, Port: CheckPort})
		return err == nil, nil
	}); err != nil {
		return err
	}
	go func() { <-ctx.Done(); _ = conn.Close() }()
	go c.send(ctx, conn)
	buf := make([]byte, 64)
	for {
		n, from, err := conn.ReadFromUDP(buf)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return ctx.Err()
			}
			continue
		}
		if n != 9 || !from.IP.Equal(c.Peer) {
			continue // not the peer's check: ignored
		}
		switch buf[0] {
		case ping:
			buf[0] = pong
			_, _ = conn.WriteToUDP(buf[:9], from)
		case pong:
			sent := time.Unix(0, int64(binary.BigEndian.Uint64(buf[1:9])))
			now := time.Now()
			if rtt := now.Sub(sent); rtt >= 0 && rtt < time.Minute {
				c.mu.Lock()
				// The first answer waited for the WireGuard handshake
				// (the tunnel holds packets until it completes): its
				// round trip is the handshake's, not the path's.
				if !c.health.LastAnswer.IsZero() {
					c.health.Latency = rtt
				} else {
					close(c.answeredLocked())
				}
				c.health.LastAnswer = now
				c.mu.Unlock()
			}
		}
	}
}

func (c *Checker) send(ctx context.Context, conn *net.UDPConn) {
	peer := &net.UDPAddr{IP: c.Peer, Port: CheckPort}
	msg := make([]byte, 9)
	sendPing := func(context.Context) {
		msg[0] = ping
		binary.BigEndian.PutUint64(msg[1:], uint64(time.Now().UnixNano()))
		_, _ = conn.WriteToUDP(msg, peer) // a send error is a lost ping
	}
	// Often until the first answer, so that the tunnel's coming up is
	// reported at once; then every Interval. Non-sliding: a ping every
	// interval, however long a send takes.
	firstCtx, answered := context.WithCancel(ctx)
	go func() {
		select {
		case <-c.Answered():
		case <-ctx.Done():
		}
		answered()
	}()
	wait.NonSlidingUntilWithContext(firstCtx, sendPing, c.FirstInterval())
	wait.NonSlidingUntilWithContext(ctx, sendPing, c.Interval)
}
