package remote

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Clients keeps one clientset per provider, built once per version of its
// credentials, so that a request served for a provider (a kubelet API
// call) does not build a client, with its transport and connections, each
// time.
type Clients struct {
	// Reader reads the local Identities and their Secrets.
	Reader client.Reader
	// Scheme is the controller-runtime client's; nil leaves Conn.Client
	// unset.
	Scheme *runtime.Scheme

	mu      sync.Mutex
	entries map[string]*Conn
}

// Conn is a provider's credentials and the clients built from them.
type Conn struct {
	*Remote
	Clientset kubernetes.Interface
	// Metrics reads the provider's metrics.k8s.io API (the usage of the
	// offloaded pods, which the kubelet API serves to the consumer's
	// metrics-server).
	Metrics metricsclient.Interface
	Client  client.Client
}

// Get returns provider's Conn, rebuilt if its credentials changed; a
// peering that is gone is forgotten.
func (c *Clients) Get(ctx context.Context, provider string) (*Conn, error) {
	r, err := For(ctx, c.Reader, provider)
	if err != nil {
		if apierrors.IsNotFound(err) {
			c.Forget(provider)
		}
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[provider]; ok && e.Version == r.Version {
		return e, nil
	}
	cs, err := kubernetes.NewForConfig(r.Config)
	if err != nil {
		return nil, err
	}
	mc, err := metricsclient.NewForConfig(r.Config)
	if err != nil {
		return nil, err
	}
	e := &Conn{Remote: r, Clientset: cs, Metrics: mc}
	if c.Scheme != nil {
		if e.Client, err = client.New(r.Config, client.Options{Scheme: c.Scheme}); err != nil {
			return nil, err
		}
	}
	if c.entries == nil {
		c.entries = map[string]*Conn{}
	}
	c.entries[provider] = e
	return e, nil
}

// Forget drops provider's clientset.
func (c *Clients) Forget(provider string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, provider)
}

// Len is the number of providers with a clientset.
func (c *Clients) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
