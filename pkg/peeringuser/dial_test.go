package peeringuser

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/liqo-go/liqo/test/harness"
)

// connectProxy relays CONNECT tunnels and counts them.
func connectProxy(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	var tunnels atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			http.Error(w, "CONNECT only", http.StatusMethodNotAllowed)
			return
		}
		up, err := net.Dial("tcp", r.Host)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		tunnels.Add(1)
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			_ = up.Close()
			return
		}
		_, _ = rw.WriteString("HTTP/1.1 200 Connection established\r\n\r\n")
		_ = rw.Flush()
		go func() { _, _ = io.Copy(up, rw); _ = up.Close() }()
		go func() { _, _ = io.Copy(conn, up); _ = conn.Close() }()
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &tunnels
}

// TestVerifyServerViaProxy: through an HTTP proxy, the server's own CA
// verifies and another is refused, and the server sees no request either
// way.
func TestVerifyServerViaProxy(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { requests.Add(1) }))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	defer srv.Close()
	proxyURL, tunnels := connectProxy(t)
	ctx := context.Background()
	// httptest's certificate names example.com and 127.0.0.1.
	if err := VerifyServerVia(ctx, srv.URL, proxyURL, serverCA(srv), 5*time.Second); err != nil {
		t.Errorf("the server's own CA, through the proxy: %v", err)
	}
	if err := VerifyServerVia(ctx, srv.URL, proxyURL, harness.SelfSignedCA(t, "other-ca"), 5*time.Second); !errors.Is(err, ErrUntrustedServer) {
		t.Errorf("another CA, through the proxy: got %v, want ErrUntrustedServer", err)
	}
	if n := tunnels.Load(); n != 2 {
		t.Errorf("the proxy relayed %d tunnels, want 2", n)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the server got %d requests", n)
	}
	if err := VerifyServerVia(ctx, srv.URL, "ftp://"+strings.TrimPrefix(proxyURL, "http://"), serverCA(srv), time.Second); err == nil {
		t.Error("an ftp:// proxy was accepted")
	}
}
