package forge

import "net/netip"

// Addresses is the one place pod addresses cross the cluster boundary. The
// network fabric remaps a peer's pod CIDR when it overlaps the local one, so
// the same pod has one address in its own cluster and another in its peer:
// ToRemote maps a local pod's address to the one the provider reaches it at
// (reflected EndpointSlices), ToLocal maps a provider pod's address to the
// one the consumer reaches it at (the status of offloaded pods). A nil
// function translates nothing, as when peering without the network fabric.
//
// HomeAPIServer is where offloaded pods reach the consumer's API server
// through the fabric (an address in the consumer's external CIDR, which
// the provider translates), invalid without the fabric or a nil function.
type Addresses struct {
	ToRemote      func(string) string
	ToLocal       func(string) string
	HomeAPIServer func() netip.Addr
}

// APIServer is where offloaded pods reach the consumer's API server.
func (a Addresses) APIServer() netip.Addr {
	if a.HomeAPIServer == nil {
		return netip.Addr{}
	}
	return a.HomeAPIServer()
}

// Remote is the provider's address of a local pod address.
func (a Addresses) Remote(ip string) string {
	if a.ToRemote == nil {
		return ip
	}
	return a.ToRemote(ip)
}

// Local is the consumer's address of a provider pod address.
func (a Addresses) Local(ip string) string {
	if a.ToLocal == nil {
		return ip
	}
	return a.ToLocal(ip)
}
