package ipam

import (
	"context"
	"fmt"
	"net/netip"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/liqo-go/liqo/pkg/ipam"
)

// localNet is a network this cluster routes itself, with what it is, for
// the messages.
type localNet struct {
	p    netip.Prefix
	what string
}

// routedLocally are the networks a peer's network must never be routed
// over: the flags' (pod, service, external CIDR, reserved subnets), the
// networks around the nodes' addresses, and the metadata services inside
// the private ranges. Only IPv4, as the IPAM.
func (o Options) routedLocally(nodes []netip.Prefix) []localNet {
	var out []localNet
	for name, p := range o.local() {
		out = append(out, localNet{p, "this cluster's " + name})
	}
	for _, p := range nodes {
		out = append(out, localNet{p, "the network of this cluster's nodes"})
	}
	for _, p := range ipam.MetadataInPrivate {
		if p.Addr().Is4() {
			out = append(out, localNet{p, "a cloud metadata service"})
		}
	}
	// Sorted, so that a message names the same network each time.
	slices.SortFunc(out, func(a, b localNet) int { return a.p.Addr().Compare(b.p.Addr()) })
	return out
}

// nodeNetworks are the IPv4 networks around the addresses the cluster's
// Nodes report (ipam.NodeNetwork), without repeats: the nodes' network is
// routed locally whether or not --reserved-subnets names it. r should be
// a cache: the list is read at each allocation and each Configuration's
// check, and never modified.
func nodeNetworks(ctx context.Context, r client.Reader) ([]netip.Prefix, error) {
	var nodes corev1.NodeList
	if err := r.List(ctx, &nodes, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing the Nodes for their networks: %w", err)
	}
	seen := map[netip.Prefix]bool{}
	var out []netip.Prefix
	for i := range nodes.Items {
		for _, p := range addressNetworks(nodes.Items[i].Status.Addresses) {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// addressNetworks are the IPv4 networks around a Node's internal and
// external addresses; names and malformed addresses are skipped.
func addressNetworks(addrs []corev1.NodeAddress) []netip.Prefix {
	var out []netip.Prefix
	for _, a := range addrs {
		if a.Type != corev1.NodeInternalIP && a.Type != corev1.NodeExternalIP {
			continue
		}
		ip, err := netip.ParseAddr(a.Address)
		if err != nil || !ip.Unmap().Is4() {
			continue
		}
		out = append(out, ipam.NodeNetwork(ip))
	}
	return out
}

// nodeAddressesChanged lets through the Node events that can change
// nodeNetworks: a Node created or deleted, or its addresses changed. Status updates
// of a running Node (its conditions, every few seconds in large numbers)
// are not.
var nodeAddressesChanged = predicate.Funcs{
	CreateFunc: func(event.CreateEvent) bool { return true },
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*corev1.Node)
		n, ok2 := e.ObjectNew.(*corev1.Node)
		return !ok1 || !ok2 || !slices.Equal(addressNetworks(o.Status.Addresses), addressNetworks(n.Status.Addresses))
	},
	DeleteFunc:  func(event.DeleteEvent) bool { return true },
	GenericFunc: func(event.GenericEvent) bool { return false },
}
