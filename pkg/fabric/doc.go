// Package fabric is the network fabric's node agent (the liqo-fabric
// command, a DaemonSet on every real node, in the node's network
// namespace): it links the node to each gateway of the cluster through
// the overlay and routes the peers' (remapped) CIDRs through it, and keeps
// the CNI from masquerading pod traffic bound to a peer, so that the peer
// sees the pods' own (remapped) addresses. It removes all of it when the
// gateway or the peering goes.
package fabric
