package harness

import (
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// ConnectProxy is an HTTP CONNECT proxy on loopback that relays tunnels to
// loopback addresses only and counts them. A host name in alias is relayed
// to the loopback address it maps to: a name only the proxy resolves.
// Tests reach a cluster through it as a consumer behind a proxy would.
type ConnectProxy struct {
	Alias   map[string]string
	ln      net.Listener
	srv     *http.Server
	Tunnels atomic.Int64
	mu      sync.Mutex
	targets map[string]bool
	open    []net.Conn
}

// StartConnectProxy starts a ConnectProxy; Stop closes it.
func StartConnectProxy(t testing.TB) *ConnectProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &ConnectProxy{ln: ln, targets: map[string]bool{}}
	p.srv = &http.Server{Handler: http.HandlerFunc(p.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p
}

// URL is the proxy's, for --proxy-url.
func (p *ConnectProxy) URL() string { return "http://" + p.ln.Addr().String() }

func (p *ConnectProxy) serve(w http.ResponseWriter, r *http.Request) {
	host, port, err := net.SplitHostPort(r.Host)
	if to, ok := p.Alias[host]; ok {
		host = to
	}
	if r.Method != http.MethodConnect || err != nil || !net.ParseIP(host).IsLoopback() {
		http.Error(w, "this proxy only tunnels to loopback", http.StatusForbidden)
		return
	}
	upstream, err := net.DialTimeout("tcp", net.JoinHostPort(host, port), 5*time.Second)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		_ = upstream.Close()
		return
	}
	p.Tunnels.Add(1)
	p.mu.Lock()
	p.targets[r.Host] = true
	p.open = append(p.open, conn, upstream)
	p.mu.Unlock()
	_, _ = rw.WriteString("HTTP/1.1 200 Connection established\r\n\r\n")
	_ = rw.Flush()
	// Bytes the client sent after its CONNECT may sit in rw's buffer.
	go func() { _, _ = io.Copy(upstream, rw); _ = upstream.Close() }()
	go func() { _, _ = io.Copy(conn, upstream); _ = conn.Close() }()
}

// Stop closes the proxy and every tunnel it relays (hijacked connections
// are not the server's to close).
func (p *ConnectProxy) Stop() {
	_ = p.srv.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.open {
		_ = c.Close()
	}
}

// SawTarget tells whether the proxy relayed a tunnel to hostport.
func (p *ConnectProxy) SawTarget(hostport string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.targets[hostport]
}
