// Package v1beta1 holds the networking.liqo.io/v1beta1 API: the user-facing
// kinds of the network fabric that joins the pod networks of two peered
// clusters.
//
// A peering's network is described, in each cluster, by objects living in the
// tenant namespace of the peer and named after its cluster ID:
//
//   - a Configuration holds the peer's pod and external CIDRs and, once the
//     local IPAM has allocated them, the CIDRs under which the peer is seen
//     here (remapped when they overlap local ones);
//   - a GatewayServer (in the cluster that accepts the tunnel) or a
//     GatewayClient (in the cluster that dials it) asks for the gateway that
//     carries the traffic, and reports where it can be reached;
//   - a PublicKey holds the peer gateway's WireGuard public key;
//   - a Connection, written by the gateway, reports whether the tunnel is up
//     and its latency.
//
// The per-node kinds of the fabric (routes, firewall rules, node tunnels) are
// internal and are not part of this group's user-facing surface.
//
// +kubebuilder:object:generate=true
// +groupName=networking.liqo.io
package v1beta1
