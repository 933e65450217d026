// Package ipam is the network fabric's address bookkeeping, as pure
// logic: which prefixes a cluster has handed out (its own, reserved, and
// the remapped CIDRs of its peers) and which addresses inside them. A
// peer's CIDR that overlaps nothing keeps its value; one that overlaps is
// remapped to a free prefix of the same size, and addresses cross by
// swapping the network bits (RemapIP). The allocator holds no state of its
// own worth keeping: the controllers rebuild it from the API objects at
// start (Restore), which are the source of truth.
package ipam
