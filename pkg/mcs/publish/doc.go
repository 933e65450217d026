// Package publish writes the record of each of a cluster's valid exports
// (record.Forge) where its direct peers read it (see package mcs): in the
// tenant namespace of each consumer here, and in this cluster's tenant
// namespace on each provider, through the provider's
// remotecluster.Cluster. An export that is gone or invalid has its
// records deleted everywhere.
package publish
