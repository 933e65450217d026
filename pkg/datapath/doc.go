// Package datapath is what the network fabric asks of the kernel, in the
// network namespace of the calling process (the gateway pod's own, or the
// node's for the node agent): a userspace WireGuard tunnel (wireguard-go on
// a TUN device, since kernel WireGuard is not everywhere), VXLAN links
// without addresses (static next hops and neighbours), policy-routing
// tables, and nftables tables replaced whole and atomically.
//
// Everything is named (link names, table IDs, nftables table names) so
// that applying is idempotent and removing takes exactly what was added.
package datapath
