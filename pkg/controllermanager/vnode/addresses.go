package vnode

import (
	"context"
	"net/netip"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/controllermanager/ipam"
	"github.com/liqo-go/liqo/pkg/reflection/forge"
)

// addresses translates the addresses of the provider's pods into this
// cluster's view of them, through the network fabric's Configuration of
// that provider, read at each use: the fabric may be connected, remapped
// or reset while the virtual node runs. Without a configured fabric an
// address is shown as the provider reports it.
//
// Local pod addresses go to the provider as they are: the provider maps
// them with its own Configuration of this cluster, and checks them there.
//
// The home API server is the IP of this cluster's API server in its
// external CIDR, once the IPAM allocated it and the fabric with that
// provider is configured: offloaded pods reach it through the fabric.
func addresses(r client.Reader, provider, namespace string) forge.Addresses {
	return forge.Addresses{HomeAPIServer: func() netip.Addr {
		if _, ok, err := ipam.PeerMapping(context.Background(), r, provider); err != nil || !ok {
			return netip.Addr{}
		}
		return ipam.HomeAPIServer(context.Background(), r, namespace)
	}, ToLocal: func(ip string) string {
		m, ok, err := ipam.PeerMapping(context.Background(), r, provider)
		if err != nil || !ok {
			return ip
		}
		if local, ok := m.Translate(ip); ok {
			return local
		}
		return ip
	}}
}
