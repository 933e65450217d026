// Package storage is the storage fabric's consumer side: the `liqo`
// virtual StorageClass and its provisioner. A PVC of the class is bound
// where its first pod is scheduled (WaitForFirstConsumer). On a local node
// it is backed by a real PVC of the cluster's real class in the storage
// namespace, and its PV carries the real PV's source and node affinity, so
// later pods run next to the data. On a virtual node a PVC of the same
// name is made in the twin namespace on that provider, which the remote
// pod mounts, and the local PV pins later pods to that provider's virtual
// nodes (data gravity); once the provider's PVC is bound, its capacity is
// shown on the local PVC and PV (SyncRemoteCapacity, driven by the
// reflection's watch of the twin namespaces). Deleting the PVC deletes
// what backs it.
package storage
