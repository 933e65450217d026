package dashboard

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"slices"
	"strconv"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

//go:embed assets
var assets embed.FS

// Options configure a dashboard server.
type Options struct {
	// Kubeconfig is the kubeconfig's path ("" for $KUBECONFIG or
	// ~/.kube/config).
	Kubeconfig string
	// Contexts are the contexts to show; none means every context of the
	// kubeconfig.
	Contexts []string
	// Namespace is where Liqo runs in every cluster.
	Namespace string
	// Port is the loopback port to listen on; 0 picks a free one.
	Port int
	// Timeout bounds the connection to each cluster.
	Timeout time.Duration
}

// Server is a running dashboard.
type Server struct {
	// URL is the page's address, on 127.0.0.1.
	URL      string
	Contexts []string
	hub      *hub
	done     chan error
}

// Start starts the dashboard: a watch of each context's cluster and the
// HTTP server on 127.0.0.1, until ctx ends. It returns once the server
// listens; the clusters are read in the background and appear on the page
// as they answer.
func Start(ctx context.Context, o Options) (*Server, error) {
	contexts, err := resolveContexts(o.Kubeconfig, o.Contexts)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(o.Port)))
	if err != nil {
		return nil, fmt.Errorf("listening on 127.0.0.1:%d: %w", o.Port, err)
	}
	sources := make([]*source, len(contexts))
	h := newHub(sources)
	for i, name := range contexts {
		sources[i] = &source{context: name, notify: h.notify}
	}
	srv := &Server{URL: "http://" + ln.Addr().String() + "/", Contexts: contexts, hub: h, done: make(chan error, 1)}
	httpSrv := &http.Server{Handler: srv.handler(ln.Addr().String()), ReadHeaderTimeout: 10 * time.Second}
	for _, s := range sources {
		go s.start(ctx, o.Kubeconfig, o.Namespace, o.Timeout)
	}
	go h.run(ctx)
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = httpSrv.Shutdown(sctx)
	}()
	go func() {
		err := httpSrv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		srv.done <- err
	}()
	return srv, nil
}

// Wait waits for the server to stop, after its context ended.
func (s *Server) Wait() error { return <-s.done }

// resolveContexts checks the contexts asked for against the kubeconfig,
// or lists all of its contexts.
func resolveContexts(kubeconfig string, asked []string) ([]string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg, err := rules.Load()
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	var all []string
	for name := range cfg.Contexts {
		all = append(all, name)
	}
	slices.Sort(all)
	if len(all) == 0 {
		return nil, errors.New("the kubeconfig has no context: pass --kubeconfig FILE or set $KUBECONFIG")
	}
	if len(asked) == 0 {
		return all, nil
	}
	var out []string
	for _, name := range asked {
		if !slices.Contains(all, name) {
			return nil, fmt.Errorf("the kubeconfig has no context %q (it has: %v)", name, all)
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out, nil
}

// handler serves the page, its assets, GET /api/state and the event
// stream GET /api/stream. Requests naming another host than the one it
// listens on are refused: a web page elsewhere could otherwise reach the
// clusters' state through a DNS name it points at 127.0.0.1.
func (s *Server) handler(addr string) http.Handler {
	_, port, _ := net.SplitHostPort(addr)
	hosts := []string{addr, "localhost:" + port}
	static, _ := fs.Sub(assets, "assets")
	mux := http.NewServeMux()
	mux.Handle("GET /", http.FileServerFS(static))
	mux.HandleFunc("GET /api/state", s.serveState)
	mux.HandleFunc("GET /api/stream", s.serveStream)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !slices.Contains(hosts, r.Host) {
			http.Error(w, "this dashboard answers only at "+s.URL, http.StatusForbidden)
			return
		}
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Cache-Control", "no-store")
		mux.ServeHTTP(w, r)
	})
}

// waitReady waits for the first picture, which comes at once with the
// clusters shown as connecting.
func (s *Server) waitReady(ctx context.Context) error {
	select {
	case <-s.hub.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Server) serveState(w http.ResponseWriter, r *http.Request) {
	if err := s.waitReady(r.Context()); err != nil {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(s.hub.current())
}

// serveStream is a Server-Sent Events stream: the picture at once, then
// each new one, as "state" events.
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	ch, cancel := s.hub.subscribe()
	defer cancel()
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case state := <-ch:
			if _, err := fmt.Fprintf(w, "event: state\ndata: %s\n\n", state); err != nil {
				return
			}
			fl.Flush()
		}
	}
}
