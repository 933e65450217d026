package forge

import (
	"net/netip"

	"github.com/liqo-go/liqo/pkg/ipam"
)

// Addresses is what the forge needs to know of the network fabric with the
// provider, read by the caller when it forges (the fabric may be
// connected, remapped or reset while a virtual node runs): data, so that
// the forge stays pure and the caller reads it with its own context and
// handles the errors.
//
// The fabric remaps a provider's pod CIDR when it overlaps the local one,
// so the same pod has one address in its own cluster and another here:
// Peer maps a provider pod's address to the one the consumer reaches it
// at (the status of offloaded pods). The zero Mapping translates nothing,
// as when peering without the fabric. Local pod addresses go to the
// provider as they are: the provider maps them with its own mapping of
// this cluster, and checks them there.
//
// HomeAPIServer is where offloaded pods reach the consumer's API server
// through the fabric (an address in the consumer's external CIDR, which
// the provider translates); invalid without the fabric.
type Addresses struct {
	Peer          ipam.Mapping
	HomeAPIServer netip.Addr
}

// Local is the consumer's address of a provider pod address: translated
// when it is in one of the provider's remapped networks, as reported
// otherwise.
func (a Addresses) Local(ip string) string {
	if local, ok := a.Peer.Translate(ip); ok {
		return local
	}
	return ip
}
