// Package ipam runs the network fabric's address management in the
// controller manager: it allocates the Networks (a peer's CIDR, kept when
// it overlaps nothing local, else remapped to a free prefix of the same
// size), the IPs (a local address given a twin in the external CIDR) and
// fills each Configuration's status with the remapped CIDRs of its peer.
//
// The API objects are the source of truth: the in-memory allocator
// (pkg/ipam) is rebuilt from their status before the first allocation
// after a start, and an object's allocation is released when the object is
// gone. No finalizer is involved, so deleting a Network or uninstalling
// never waits for this controller.
package ipam
