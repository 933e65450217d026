package trust

import (
	"errors"
	"fmt"
	"net/netip"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/liqo-go/liqo/pkg/ipam"
)

// Endpoints checks the endpoints cluster sender published for its export
// and returns them at the addresses the receiver reaches them at. peer is
// the receiver's mapping of the sender's pod and external CIDRs (its
// network Configuration for the sender, ipam.RemoteMapping: the mapping
// the reflection of EndpointSlices translates with), the zero Mapping when
// there is no network fabric with the sender, so nothing of it is
// reachable. An address outside the sender's own networks (another
// cluster's, the receiver's Services or nodes, anything else) refuses the
// whole set, naming it: an export publishes endpoints of its own cluster
// only.
func Endpoints(sender string, peer ipam.Mapping, eps []discoveryv1.Endpoint) ([]discoveryv1.Endpoint, error) {
	out := make([]discoveryv1.Endpoint, 0, len(eps))
	var errs []error
	for _, ep := range eps {
		ep = *ep.DeepCopy()
		for i, a := range ep.Addresses {
			if _, err := netip.ParseAddr(a); err != nil {
				errs = append(errs, fmt.Errorf("%q is not an IP address", a))
				continue
			}
			seen, ok := peer.Translate(a)
			if !ok {
				errs = append(errs, fmt.Errorf("%s is not in the cluster's own networks", a))
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
