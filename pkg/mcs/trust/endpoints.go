package trust

import (
	"errors"
	"fmt"
	"net/netip"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/liqo-go/liqo/pkg/ipam"
)

// CIDR is one network of a peer as the receiver sees it: Real is the
// peer's own (its pod or external CIDR), Seen where the receiver reaches it
// (the remapped CIDR when the fabric remaps it, Real otherwise). Both have
// the same size.
type CIDR struct{ Real, Seen netip.Prefix }

// Endpoints checks the endpoints cluster sender published for its export,
// whose networks as the receiver's Configuration for it says are cidrs,
// and returns them at the addresses the receiver reaches them at. An
// address outside the sender's own networks (another cluster's, the
// receiver's Services or nodes, anything else) refuses the whole set,
// naming it: an export publishes endpoints of its own cluster only.
func Endpoints(sender string, cidrs []CIDR, eps []discoveryv1.Endpoint) ([]discoveryv1.Endpoint, error) {
	out := make([]discoveryv1.Endpoint, 0, len(eps))
	var errs []error
	for _, ep := range eps {
		ep = *ep.DeepCopy()
		for i, a := range ep.Addresses {
			seen, err := translate(a, cidrs)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			ep.Addresses[i] = seen
		}
		out = append(out, ep)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("refusing the endpoints of cluster %s: %w", sender, err)
	}
	return out, nil
}

// translate is address a of the sender where the receiver reaches it.
func translate(a string, cidrs []CIDR) (string, error) {
	ip, err := netip.ParseAddr(a)
	if err != nil {
		return "", fmt.Errorf("%q is not an IP address", a)
	}
	for _, c := range cidrs {
		if !c.Real.Contains(ip) {
			continue
		}
		if c.Seen == c.Real {
			return ip.String(), nil
		}
		seen, err := ipam.RemapIP(ip, c.Real, c.Seen)
		if err != nil {
			return "", err
		}
		return seen.String(), nil
	}
	return "", fmt.Errorf("%s is not in the cluster's own networks", ip)
}
