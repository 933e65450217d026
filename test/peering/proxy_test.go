package peering

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl"
)

// connectProxy is an HTTP CONNECT proxy on loopback that relays tunnels to
// loopback addresses only and counts them. A host name in alias is relayed
// to the loopback address it maps to: a name only the proxy resolves.
type connectProxy struct {
	alias   map[string]string
	ln      net.Listener
	srv     *http.Server
	tunnels atomic.Int64
	mu      sync.Mutex
	targets map[string]bool
	open    []net.Conn
}

func startConnectProxy(t *testing.T) *connectProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &connectProxy{ln: ln, targets: map[string]bool{}}
	p.srv = &http.Server{Handler: http.HandlerFunc(p.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p
}

func (p *connectProxy) url() string { return "http://" + p.ln.Addr().String() }

func (p *connectProxy) serve(w http.ResponseWriter, r *http.Request) {
	host, port, err := net.SplitHostPort(r.Host)
	if to, ok := p.alias[host]; ok {
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
	p.tunnels.Add(1)
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

// stop closes the proxy and every tunnel it relays (hijacked connections
// are not the server's to close).
func (p *connectProxy) stop() {
	_ = p.srv.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.open {
		_ = c.Close()
	}
}

func (p *connectProxy) sawTarget(hostport string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.targets[hostport]
}

// TestProxyURL: milan peers with naples through an HTTP CONNECT proxy given
// by --proxy-url. liqoctl itself connects directly (its kubeconfig names no
// proxy), so every tunnel the proxy relays is opened by milan's components,
// from the kubeconfig their Identity holds: the virtual node gets Ready
// through it. A URL client-go could not use is refused before anything
// changes, naming the flag, with the usage exit code.
func TestProxyURL(t *testing.T) {
	const consumer, provider = "milan", "naples"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	for _, bad := range []string{"ftp://127.0.0.1:21", "http://", "127.0.0.1:3128", "http://[::1"} {
		var stdout, stderr strings.Builder
		code := liqoctl.Run(ctx, []string{"peer", "--kubeconfig", kubeconfigs[consumer], "--remote-kubeconfig", kubeconfigs[provider],
			"--networking-disabled", "--proxy-url", bad}, &stdout, &stderr)
		if code != liqoctl.ExitUsage || !strings.Contains(stderr.String(), "--proxy-url") {
			t.Errorf("peer --proxy-url %s: exit %d, %q; want exit %d naming --proxy-url", bad, code, stderr.String(), liqoctl.ExitUsage)
		}
	}

	proxy := startConnectProxy(t)
	defer proxy.stop()
	defer func() {
		if out, err := run(context.Background(), "unpeer", "--kubeconfig", kubeconfigs[consumer], "--remote-kubeconfig", kubeconfigs[provider]); err != nil {
			t.Errorf("unpeer: %v\n%s", err, out)
		}
	}()
	peer(t, consumer, provider, "--proxy-url", proxy.url(), "--cpu", "1", "--memory", "1Gi", "--pods", "10")

	server := strings.TrimPrefix(tb.Cluster(provider).Config.Host, "https://")
	if proxy.tunnels.Load() == 0 || !proxy.sawTarget(server) {
		t.Errorf("the proxy relayed %d tunnels, to %s too: %v; want some, to %s", proxy.tunnels.Load(), server, proxy.sawTarget(server), server)
	}
	kubeconfig, err := run(ctx, "get", "kubeconfig", "--remote-cluster-id", provider, "--kubeconfig", kubeconfigs[consumer])
	if err != nil || !strings.Contains(kubeconfig, "proxy-url: "+proxy.url()) {
		t.Errorf("the kubeconfig %s keeps for %s (%v) has no proxy-url %s:\n%s", consumer, provider, err, proxy.url(), kubeconfig)
	}
	var id authv1beta1.Identity
	if err := clusterClient(t, consumer).Get(ctx, client.ObjectKey{Namespace: consts.TenantNamespace(provider), Name: consts.IdentityName(provider)}, &id); err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(id.Status.Conditions, authv1beta1.ReadyCondition); c == nil || !strings.Contains(c.Message, "through proxy "+proxy.url()) {
		t.Errorf("the Identity's Ready condition does not name the proxy: %+v", c)
	}
	t.Logf("%d tunnels through the proxy to %s", proxy.tunnels.Load(), server)
}
