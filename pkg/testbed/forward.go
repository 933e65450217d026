package testbed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/liqo-go/liqo/pkg/testbed/netns"
)

// forwarder relays every connection accepted on a listener to a dialed
// peer. With the listener made inside one network namespace and the dialer
// working in another, it joins the two without a route between them.
type forwarder struct {
	l    net.Listener
	dial func(ctx context.Context) (net.Conn, error)

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func serveForward(l net.Listener, dial func(ctx context.Context) (net.Conn, error)) *forwarder {
	ctx, cancel := context.WithCancel(context.Background())
	f := &forwarder{l: l, dial: dial, ctx: ctx, cancel: cancel}
	f.wg.Go(f.acceptLoop)
	return f
}

func (f *forwarder) acceptLoop() {
	for {
		in, err := f.l.Accept()
		if err != nil {
			return
		}
		f.wg.Go(func() {
			defer func() { _ = in.Close() }()
			ctx, cancel := context.WithTimeout(f.ctx, 10*time.Second)
			out, err := f.dial(ctx)
			cancel()
			if err != nil {
				return
			}
			pipe(f.ctx, in, out)
		})
	}
}

// Close stops accepting and ends every relayed connection.
func (f *forwarder) Close() {
	f.cancel()
	f.l.Close()
	f.wg.Wait()
}

// pipe copies both ways until either side closes or ctx ends.
func pipe(ctx context.Context, a, b net.Conn) {
	defer func() { _ = b.Close() }()
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	select {
	case <-done:
		select {
		case <-done:
		case <-ctx.Done():
		case <-time.After(time.Minute):
		}
	case <-ctx.Done():
	}
	_ = a.Close()
	_ = b.Close()
}

// egressProxy is the API server's way to the cluster (kube-apiserver's
// egress selector, "cluster" traffic: kubelets for logs, exec and
// port-forward, webhooks, proxied Services). It answers HTTP CONNECT on a
// Unix socket — so it listens on no network at all — and dials loopback
// targets from the root namespace and underlay targets from inside the
// underlay. Anything else is refused: no request of the API server can send
// a packet off the machine.
type egressProxy struct {
	underlayNS string
	// inCluster are the cluster's pod and service CIDRs, and nodeNS the
	// namespace of a real node, where the routes to every pod and
	// kube-proxy's Service rules are: in-cluster webhooks (a Service) and
	// the virtual kubelets of an in-cluster manager (a pod IP) are
	// reached from there, as from a control-plane node.
	inCluster []netip.Prefix
	nodeNS    string
	srv       *http.Server
	l         net.Listener
	wg        sync.WaitGroup
}

func serveEgressProxy(socket, underlayNS, nodeNS string, inCluster []netip.Prefix) (*egressProxy, error) {
	l, err := net.Listen("unix", socket)
	if err != nil {
		return nil, fmt.Errorf("listening for the API server's egress on %s: %w", socket, err)
	}
	p := &egressProxy{underlayNS: underlayNS, nodeNS: nodeNS, inCluster: inCluster, l: l}
	p.srv = &http.Server{Handler: http.HandlerFunc(p.connect), ReadHeaderTimeout: 10 * time.Second}
	p.wg.Go(func() { _ = p.srv.Serve(l) })
	return p, nil
}

func (p *egressProxy) connect(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect {
		http.Error(w, "only CONNECT is served", http.StatusMethodNotAllowed)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	out, err := p.dial(ctx, r.Host)
	cancel()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		_ = out.Close()
		http.Error(w, "cannot hijack the connection", http.StatusInternalServerError)
		return
	}
	in, buf, err := hj.Hijack()
	if err != nil {
		_ = out.Close()
		return
	}
	if _, err := in.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		_ = in.Close()
		_ = out.Close()
		return
	}
	// Bytes the client sent right after its request are already buffered.
	if n := buf.Reader.Buffered(); n > 0 {
		data, _ := buf.Peek(n)
		if _, err := out.Write(data); err != nil {
			_ = in.Close()
			_ = out.Close()
			return
		}
	}
	pipe(context.Background(), in, out)
}

// dial reaches a target of the API server, refusing anything outside
// loopback and the underlay.
func (p *egressProxy) dial(ctx context.Context, hostport string) (net.Conn, error) {
	ap, err := netip.ParseAddrPort(hostport)
	if err != nil {
		return nil, fmt.Errorf("egress to %q refused: only IP:port targets are served", hostport)
	}
	switch {
	case ap.Addr().IsLoopback():
		var d net.Dialer
		return d.DialContext(ctx, "tcp", hostport)
	case underlayNet.Contains(ap.Addr()):
		return netns.Dial(ctx, p.underlayNS, "tcp", hostport)
	}
	for _, n := range p.inCluster {
		if n.Contains(ap.Addr()) {
			return netns.Dial(ctx, p.nodeNS, "tcp", hostport)
		}
	}
	return nil, errors.New("egress to " + hostport + " refused: outside loopback, the testbed's underlay and the cluster's pod and service networks")
}

func (p *egressProxy) Close() {
	_ = p.srv.Close()
	p.wg.Wait()
}
