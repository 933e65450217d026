// Package replicator keeps, for each of a consumer's objects of one kind in
// the tenant namespace of a provider, a replica in the consumer's tenant
// namespace on that provider, and copies the provider's answer (the
// replica's status) back into the local object.
//
// One generic Reconciler serves every replicated kind (ResourceSlices,
// NamespaceMaps); a Kind says, with pure functions, what of the spec goes out
// and what of the replica comes back. Replicas carry the replication and
// origin labels; the replicator never touches a remote object without this
// cluster's origin label.
package replicator
