package vnode

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/controllermanager/ipam"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/forge"
)

// fabric is the network fabric with one provider as the reflection of its
// virtual node needs it (forge.Addresses), read from the manager's cache
// at each use: the fabric may be connected, remapped or reset while the
// virtual node runs.
//
// The provider's pod addresses are translated through the fabric's
// Configuration of that provider; without a configured fabric they are
// shown as the provider reports them, and offloaded pods get no home API
// server. The home API server is the IP of this cluster's API server in
// its external CIDR, once the IPAM allocated it: offloaded pods reach it
// through the fabric.
type fabric struct {
	reader client.Reader
	// provider is the provider's cluster ID; namespace the components'
	// namespace, which holds the API server's IP.
	provider, namespace string
}

// Addresses reads the fabric's current state.
func (f fabric) Addresses(ctx context.Context) (forge.Addresses, error) {
	peer, ok, err := ipam.PeerMapping(ctx, f.reader, f.provider)
	if err != nil {
		return forge.Addresses{}, fmt.Errorf("reading the network Configuration of cluster %s: %w", f.provider, err)
	}
	if !ok {
		return forge.Addresses{}, nil
	}
	home, err := ipam.HomeAPIServer(ctx, f.reader, f.namespace)
	if err != nil {
		return forge.Addresses{}, fmt.Errorf("reading the IP of the API server: %w", err)
	}
	return forge.Addresses{Peer: peer, HomeAPIServer: home}, nil
}
