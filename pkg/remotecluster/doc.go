// Package remotecluster is how this cluster reaches its providers, and the
// one place that builds clients for them.
//
// A Registry turns a peering's credentials (the kubeconfig Secret the
// Identity controller writes, or the one a VirtualNode names) into a
// Cluster: one per provider and version of the credentials, holding the
// REST config, one HTTP client and REST mapper, the clients built on them,
// the health probe, and the namespace caches, shared by everyone who
// watches a namespace there (each virtual node of the provider, the
// replicators). When the credentials change the Registry builds a new
// Cluster and marks the old one stale (Cluster.Stale): its long-lived
// users move to the new one, and the old one's caches stop with their
// last user. controller-runtime's cluster.Cluster and cluster-api's
// ClusterCacheTracker are the models: one cache set per remote cluster,
// shared.
package remotecluster
