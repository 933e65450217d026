package virtualkubelet

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// probe asks an API server whether it is ready and which version it runs.
// Both endpoints are readable by any authenticated user (the
// system:public-info-viewer role), so the low-privilege identity a consumer
// holds on its provider is enough.
type probe struct {
	client rest.Interface
}

func newProbe(cfg *rest.Config) (*probe, error) {
	if cfg == nil {
		return nil, fmt.Errorf("no configuration for the remote cluster")
	}
	// The discovery client is a REST client with no API group, fit for the
	// server's root paths, and it reuses cfg's TLS transport.
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building a client for the remote cluster: %w", err)
	}
	return &probe{client: dc.RESTClient()}, nil
}

// ready fails unless /readyz answers 200: a non-ready server (etcd lost,
// shutting down) is as useless to the virtual node as an unreachable one.
func (p *probe) ready(ctx context.Context) error {
	_, err := p.client.Get().AbsPath("/readyz").DoRaw(ctx)
	return err
}

// version returns the server's git version.
func (p *probe) version(ctx context.Context) (string, error) {
	body, err := p.client.Get().AbsPath("/version").DoRaw(ctx)
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
