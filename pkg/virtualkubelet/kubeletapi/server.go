package kubeletapi

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"sync"
	"time"

	vkapi "github.com/virtual-kubelet/virtual-kubelet/node/api"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/request/union"
	x509request "k8s.io/apiserver/pkg/authentication/request/x509"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"

	"github.com/liqo-go/liqo/pkg/virtualkubelet"
)

// The ConfigMap where the API server publishes the CA of client
// certificates, for servers that authenticate its clients.
const (
	authConfigMapNamespace = "kube-system"
	authConfigMapName      = "extension-apiserver-authentication"
	clientCAKey            = "client-ca-file"
)

// Server is the kubelet API of the virtual nodes of one controller manager.
// Each virtual node has a listener of its own (Open), because the API
// server and metrics-server reach a node at its address and kubelet port
// and name the node nowhere in the request: the port tells the node, whose
// usage /stats/summary and /metrics/resource serve. Start serves every
// node's listener, those opened before and after it, until its context
// ends.
type Server struct {
	cfg   Config
	certs certHolder

	mu      sync.Mutex
	nodes   map[string]*nodeEndpoint
	srv     *http.Server // nil until Start serves
	stopped bool
}

// nodeEndpoint is a virtual node's listener and its usage counters.
type nodeEndpoint struct {
	listener net.Listener
	port     int
	meter    *meter
}

// New validates cfg.
func New(cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, nodes: map[string]*nodeEndpoint{}}, nil
}

// NeedLeaderElection lets every replica of the controller manager serve:
// only the leader's virtual nodes open listeners, and serving is harmless.
func (s *Server) NeedLeaderElection() bool { return false }

// Start obtains the serving certificate and serves until ctx ends, then
// closes every listener and connection, streams included. It returns an
// error only if it cannot serve.
func (s *Server) Start(ctx context.Context) error {
	log := s.cfg.Logger
	ca, err := dynamiccertificates.NewDynamicCAFromConfigMapController("client-ca", authConfigMapNamespace, authConfigMapName, clientCAKey, s.cfg.Client)
	if err != nil {
		s.stop()
		return fmt.Errorf("kubelet API: client CA: %w", err)
	}
	go ca.Run(ctx, 1)
	// Client certificates first, as the kubelet does; every authenticated
	// user is also in system:authenticated, which RBAC rules may name.
	authn := group.NewAuthenticatedGroupAdder(union.New(
		x509request.NewDynamic(ca.VerifyOptions, x509request.CommonNameUserConversion),
		bearertoken.New(tokenReviewer{client: s.cfg.Client}),
	))
	authz := accessReviewer{client: s.cfg.Client}

	p := &proxy{resolver: s.cfg.Resolver, base: ctx}
	handler := &guard{authn: authn, authz: authz, resolver: s.cfg.Resolver, log: log, next: vkapi.PodHandler(vkapi.PodHandlerConfig{
		RunInContainer:        p.exec,
		AttachToContainer:     p.attach,
		PortForward:           p.portForward,
		GetContainerLogs:      p.logs,
		GetStatsSummary:       s.statsSummary,
		GetMetricsResource:    s.metricsResource,
		StreamIdleTimeout:     s.cfg.StreamIdleTimeout,
		StreamCreationTimeout: streamCreationTimeout,
	}, false)}

	go s.keepCertificate(ctx)
	// virtual-kubelet's handlers log through the request's context.
	base := virtualkubelet.WithLogger(ctx, log)
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: streamCreationTimeout,
		BaseContext:       func(net.Listener) context.Context { return base },
		// The port a connection came in on tells the node it is for.
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if a, ok := c.LocalAddr().(*net.TCPAddr); ok {
				if node := s.nodeAt(a.Port); node != "" {
					return withNode(ctx, node)
				}
			}
			return ctx
		},
		TLSConfig: &tls.Config{
			MinVersion:     tls.VersionTLS12,
			GetCertificate: s.certs.getCertificate,
			// The authenticator verifies client certificates against the
			// current client CA; bearer tokens need none.
			ClientAuth: tls.RequestClientCert,
		},
	}
	s.mu.Lock()
	s.srv = srv
	for node, e := range s.nodes {
		go s.serve(node, e.listener)
	}
	s.mu.Unlock()
	log.Info("serving the kubelet API of the virtual nodes", "listen", s.cfg.ListenAddress, "advertised", s.cfg.AdvertiseIP)
	<-ctx.Done()
	s.stop()
	_ = srv.Close()
	return nil
}

// stop closes the listeners and refuses new ones.
func (s *Server) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	for node, e := range s.nodes {
		_ = e.listener.Close()
		delete(s.nodes, node)
	}
}

// serve serves one node's listener until it is closed.
func (s *Server) serve(node string, l net.Listener) {
	err := s.srv.ServeTLS(l, "", "")
	if err == nil || errors.Is(err, http.ErrServerClosed) || errors.Is(err, net.ErrClosed) {
		return
	}
	s.cfg.Logger.Error(err, "serving the kubelet API of a virtual node", "node", node)
}

// keepCertificate obtains the serving certificate and renews it, retrying
// with backoff until ctx ends.
func (s *Server) keepCertificate(ctx context.Context) {
	is := &issuer{mode: s.cfg.Certificate, client: s.cfg.Client, ip: net.ParseIP(s.cfg.AdvertiseIP), commonName: s.cfg.CommonName}
	// Failures are retried after 1 s, doubling up to a minute; a success
	// waits for the renewal time and starts the backoff over. Steps is
	// unbounded so that retries never stop.
	initial := wait.Backoff{Duration: time.Second, Factor: 2, Cap: time.Minute, Steps: math.MaxInt32}
	backoff := initial
	var wake time.Duration
	// Sliding: the delay is asked for after each attempt, so it is the one
	// that attempt chose. Until ends only with ctx.
	_ = wait.DelayFunc(func() time.Duration { return wake }).Until(ctx, true, true, func(ctx context.Context) (bool, error) {
		cert, renew, err := is.issue(ctx)
		if err != nil {
			if ctx.Err() == nil {
				wake = backoff.Step()
				s.cfg.Logger.Error(err, "obtaining the kubelet API serving certificate; retrying", "after", wake)
			}
			return false, nil
		}
		s.certs.cert.Store(cert)
		s.cfg.Logger.V(1).Info("kubelet API serving certificate obtained", "mode", s.cfg.Certificate, "notAfter", cert.Leaf.NotAfter, "renewAt", renew)
		wake, backoff = time.Until(renew), initial
		return false, nil
	})
}
