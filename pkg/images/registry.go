package images

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

// Registry is a plain-HTTP OCI distribution registry (go-containerregistry's
// pkg/registry) whose blobs are files under a directory, so that large
// images do not sit in memory; manifests, small, are in memory and die with
// it. It answers on whatever listeners the caller gives it, for instance
// one on loopback to push to and one inside a network namespace for the
// nodes that pull: the caller chooses addresses and namespaces, the
// registry only serves.
//
// Serve and Close may be called from any goroutine.
type Registry struct {
	handler http.Handler
	log     *log.Logger

	mu      sync.Mutex
	closed  bool
	servers []*http.Server
	wg      sync.WaitGroup
}

// NewRegistry makes a registry keeping its blobs under dir (created if
// absent). logger receives the registry's request log and the errors of
// its servers; nil discards them, since a registry answering every pull of
// a test cluster would drown the test's output. private lists the parts of
// its namespace that need credentials (see PrivateRepos); the rest is open.
func NewRegistry(dir string, logger *log.Logger, private ...PrivateRepos) (*Registry, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the registry's blob directory: %w", err)
	}
	if logger == nil {
		logger = log.New(io.Discard, "", 0)
	}
	handler := registry.New(
		registry.WithBlobHandler(registry.NewDiskBlobHandler(dir)),
		registry.Logger(logger),
	)
	for _, p := range private {
		handler = p.Wrap(handler)
	}
	return &Registry{handler: handler, log: logger}, nil
}

// Serve answers registry requests on l, in a goroutine of its own, until
// Close; the registry owns l from then on and closes it. Serving after
// Close only closes l.
func (r *Registry) Serve(l net.Listener) {
	srv := &http.Server{
		Handler:           r.handler,
		ErrorLog:          r.log,
		ReadHeaderTimeout: 30 * time.Second,
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		_ = l.Close()
		return
	}
	r.servers = append(r.servers, srv)
	r.wg.Go(func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			r.log.Printf("registry on %s: %v", l.Addr(), err)
		}
	})
}

// Close stops every server at once, closing their listeners and open
// connections (a pull in progress fails), and returns when none of their
// goroutines is left. Closing twice is harmless.
func (r *Registry) Close() error {
	r.mu.Lock()
	r.closed = true
	servers := r.servers
	r.servers = nil
	r.mu.Unlock()
	var errs []error
	for _, s := range servers {
		errs = append(errs, s.Close())
	}
	r.wg.Wait()
	return errors.Join(errs...)
}
