package trust

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/validation"

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
// only. A hostname that is not a DNS label refuses the set too.
//
// Each endpoint keeps the name it has in its own cluster: its hostname,
// or when it has none the name DNS gives it there (its address with
// dashes, as CoreDNS derives it), so that
// <name>.<cluster>.<service>.<ns>.svc.clusterset.local and the SRV
// targets name the same pod in every cluster, also where the fabric
// remaps its address.
func Endpoints(sender string, peer ipam.Mapping, eps []discoveryv1.Endpoint) ([]discoveryv1.Endpoint, error) {
	out := make([]discoveryv1.Endpoint, 0, len(eps))
	var errs []error
	for _, ep := range eps {
		ep = *ep.DeepCopy()
		if ep.Hostname != nil {
			if msgs := validation.IsDNS1123Label(*ep.Hostname); len(msgs) > 0 {
				errs = append(errs, fmt.Errorf("hostname %q: %s", *ep.Hostname, strings.Join(msgs, "; ")))
			}
		} else if len(ep.Addresses) > 0 {
			ep.Hostname = addressName(ep.Addresses[0])
		}
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

// addressName is the DNS label of an endpoint without a hostname in its
// own cluster (10.244.0.7 is 10-244-0-7), or nil if the address makes
// none.
func addressName(addr string) *string {
	name := strings.NewReplacer(".", "-", ":", "-").Replace(addr)
	if len(validation.IsDNS1123Label(name)) > 0 {
		return nil
	}
	return &name
}
