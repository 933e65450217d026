package remotecluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/clientcfg"
)

// Cluster is one remote cluster reached with one version of the
// credentials this cluster holds there. Its clients share one HTTP client
// (one connection pool) and one REST mapper. It is safe for concurrent
// use.
type Cluster struct {
	// Provider is the remote cluster's ID.
	Provider string
	// Version identifies the credentials (the kubeconfig Secret's resource
	// version): new credentials make a new Cluster.
	Version string
	// Config reaches the remote API server (the kubelet API's exec and
	// port-forward build their streams on it).
	Config     *rest.Config
	HTTPClient *http.Client
	Mapper     meta.RESTMapper
	// Client is a controller-runtime client, uncached: the namespace caches
	// (NamespaceCache) are what watches.
	Client    client.Client
	Clientset kubernetes.Interface
	// Metrics reads the remote metrics.k8s.io API (the usage of the
	// offloaded pods, which the kubelet API serves).
	Metrics metricsclient.Interface

	scheme *runtime.Scheme
	probe  rest.Interface

	staleOnce sync.Once
	stale     chan struct{}

	mu     sync.Mutex
	caches map[cacheKey]*NamespaceCache
}

// Options tune the Clusters a Registry (or New) builds.
type Options struct {
	// Scheme is the clients' and caches' (client-go's when nil).
	Scheme *runtime.Scheme
	// HTTPClient and Mapper, when both set, are used instead of new ones:
	// the local cluster's Cluster shares the manager's.
	HTTPClient *http.Client
	Mapper     meta.RESTMapper
	// WrapTransport, when set, wraps the transport of every request to the
	// remote cluster: the tests count the watches with it.
	WrapTransport transport.WrapperFunc
}

// New builds the clients of the cluster provider reached with cfg, at
// credentials version. It is the one place where clients for a remote
// cluster are made: everything else gets them from a Registry.
func New(provider, version string, cfg *rest.Config, o Options) (*Cluster, error) {
	if cfg == nil {
		return nil, fmt.Errorf("no configuration for cluster %s", provider)
	}
	cfg = clientcfg.Tuned(cfg)
	if o.WrapTransport != nil {
		cfg.Wrap(o.WrapTransport)
	}
	hc, mapper := o.HTTPClient, o.Mapper
	if hc == nil || mapper == nil {
		var err error
		if hc, mapper, err = clientcfg.Shared(cfg); err != nil {
			return nil, fmt.Errorf("cluster %s: %w", provider, err)
		}
	}
	var err error
	c := &Cluster{Provider: provider, Version: version, Config: cfg, HTTPClient: hc, Mapper: mapper,
		scheme: o.Scheme, stale: make(chan struct{}), caches: map[cacheKey]*NamespaceCache{}}
	if c.Client, err = client.New(cfg, client.Options{Scheme: o.Scheme, HTTPClient: hc, Mapper: mapper}); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", provider, err)
	}
	if c.Clientset, err = kubernetes.NewForConfigAndClient(clientcfg.Protobuf(cfg), hc); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", provider, err)
	}
	if c.Metrics, err = metricsclient.NewForConfigAndClient(cfg, hc); err != nil {
		return nil, fmt.Errorf("cluster %s: %w", provider, err)
	}
	// The discovery client is a REST client with no API group, fit for
	// the server's root paths (/readyz, /version).
	dc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", provider, err)
	}
	c.probe = dc.RESTClient()
	return c, nil
}

// Stale is closed once newer credentials replaced these, or the peering
// is gone: long-lived users then get the current Cluster from the
// Registry, and release what they hold of this one.
func (c *Cluster) Stale() <-chan struct{} { return c.stale }

// IsStale reports whether Stale is closed.
func (c *Cluster) IsStale() bool {
	select {
	case <-c.stale:
		return true
	default:
		return false
	}
}

// markStale closes Stale and the idle connections: requests in flight
// finish, the caches stop with their last user.
func (c *Cluster) markStale() {
	c.staleOnce.Do(func() {
		close(c.stale)
		c.HTTPClient.CloseIdleConnections()
	})
}

// Ready fails unless the remote API server's /readyz answers 200: a server
// that is not ready (etcd lost, shutting down) is as useless as an
// unreachable one. Any authenticated user may read it (the
// system:public-info-viewer role), so the low-privilege identity a
// consumer holds on its provider is enough.
func (c *Cluster) Ready(ctx context.Context) error {
	_, err := c.probe.Get().AbsPath("/readyz").DoRaw(ctx)
	return err
}

// ServerVersion returns the remote API server's git version.
func (c *Cluster) ServerVersion(ctx context.Context) (string, error) {
	return ServerVersion(ctx, c.probe)
}

// ServerVersion returns the git version of the API server rc reaches
// (a discovery client's REST client).
func ServerVersion(ctx context.Context, rc rest.Interface) (string, error) {
	body, err := rc.Get().AbsPath("/version").DoRaw(ctx)
	if err != nil {
		return "", err
	}
	var info version.Info
	if err := json.Unmarshal(body, &info); err != nil {
		return "", fmt.Errorf("parsing the server version: %w", err)
	}
	if info.GitVersion == "" {
		return "", fmt.Errorf("the server reported no version")
	}
	return info.GitVersion, nil
}
