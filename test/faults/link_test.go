//go:build faults

package faults

import (
	"net"
	"net/url"
	"sync"
)

// link is the network between the consumers and a provider's API server:
// a TCP relay the provider advertises as its API server's address, which a
// test can cut and heal. Cut, it behaves as a partition does: nothing is
// refused or closed, bytes just stop flowing both ways (the relay stops
// reading), so clients wait for their own timeouts; healed, the relayed
// connections that are still open carry on.
type link struct {
	ln     net.Listener
	target string

	mu   sync.Mutex
	cond *sync.Cond
	cut  bool
}

// newLink relays a loopback port to the host of server (an https URL).
func newLink(server string) (*link, error) {
	u, err := url.Parse(server)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &link{ln: ln, target: u.Host}
	l.cond = sync.NewCond(&l.mu)
	go l.serve()
	return l, nil
}

// URL is the API server's URL through the link.
func (l *link) URL() string { return "https://" + l.ln.Addr().String() }

// Cut stops every byte, in both directions, until Heal.
func (l *link) Cut() {
	l.mu.Lock()
	l.cut = true
	l.mu.Unlock()
}

// Heal lets the bytes flow again.
func (l *link) Heal() {
	l.mu.Lock()
	l.cut = false
	l.mu.Unlock()
	l.cond.Broadcast()
}

// Close stops accepting connections; relayed ones end with their peers.
func (l *link) Close() error { return l.ln.Close() }

func (l *link) waitOpen() {
	l.mu.Lock()
	for l.cut {
		l.cond.Wait()
	}
	l.mu.Unlock()
}

func (l *link) serve() {
	for {
		in, err := l.ln.Accept()
		if err != nil {
			return
		}
		go func() {
			l.waitOpen() // a connection made during a cut gets nowhere until it heals
			out, err := net.Dial("tcp", l.target)
			if err != nil {
				_ = in.Close()
				return
			}
			go l.relay(out, in)
			l.relay(in, out)
		}()
	}
}

// relay copies src to dst while the link is up, then closes both.
func (l *link) relay(dst, src net.Conn) {
	defer func() { _ = dst.Close(); _ = src.Close() }()
	buf := make([]byte, 32<<10)
	for {
		l.waitOpen()
		n, err := src.Read(buf)
		if n > 0 {
			l.waitOpen()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil { // io.EOF included: the peer closed
			return
		}
	}
}
