package kubeletapi

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"time"

	dto "github.com/prometheus/client_model/go"
	vkapi "github.com/virtual-kubelet/virtual-kubelet/node/api"
	"github.com/virtual-kubelet/virtual-kubelet/node/api/statsv1alpha1"
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
// New opens its listener, so that Endpoint is known before the virtual nodes
// start; Start serves until its context ends.
type Server struct {
	cfg      Config
	listener net.Listener
	port     int32
	certs    certHolder
}

// New validates cfg and opens the listener.
func New(cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", cfg.ListenAddress)
	if err != nil {
		return nil, fmt.Errorf("kubelet API: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	return &Server{cfg: cfg, listener: l, port: int32(port)}, nil
}

// Endpoint is the address and port every virtual node publishes as its
// InternalIP and kubelet endpoint.
func (s *Server) Endpoint() (ip string, port int32) { return s.cfg.AdvertiseIP, s.port }

// Close releases the listener of a Server that will not be started; Start
// releases it itself.
func (s *Server) Close() error { return s.listener.Close() }

// NeedLeaderElection lets every replica of the controller manager serve:
// only the leader's virtual nodes point at it, and serving is harmless.
func (s *Server) NeedLeaderElection() bool { return false }

// Start obtains the serving certificate and serves until ctx ends, then
// closes the listener and every connection, streams included. It returns an
// error only if it cannot serve.
func (s *Server) Start(ctx context.Context) error {
	defer s.listener.Close()
	log := s.cfg.Logger
	ca, err := dynamiccertificates.NewDynamicCAFromConfigMapController("client-ca", authConfigMapNamespace, authConfigMapName, clientCAKey, s.cfg.Client)
	if err != nil {
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
		GetStatsSummary:       emptySummary,
		GetMetricsResource:    noMetrics,
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
		TLSConfig: &tls.Config{
			MinVersion:     tls.VersionTLS12,
			GetCertificate: s.certs.getCertificate,
			// The authenticator verifies client certificates against the
			// current client CA; bearer tokens need none.
			ClientAuth: tls.RequestClientCert,
		},
	}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	ip, port := s.Endpoint()
	log.Info("serving the kubelet API of the virtual nodes", "listen", s.listener.Addr().String(), "advertised", net.JoinHostPort(ip, fmt.Sprint(port)))
	if err := srv.ServeTLS(s.listener, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) && ctx.Err() == nil {
		return fmt.Errorf("kubelet API: %w", err)
	}
	return nil
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

// emptySummary answers /stats/summary. All virtual nodes share this server
// and the kubelet API does not say which node a request is for, so there
// are no per-node figures to give: the summary is valid and empty.
func emptySummary(context.Context) (*statsv1alpha1.Summary, error) {
	return &statsv1alpha1.Summary{}, nil
}

// noMetrics answers /metrics/resource with no samples, for the reason of
// emptySummary.
func noMetrics(context.Context) ([]*dto.MetricFamily, error) { return nil, nil }
