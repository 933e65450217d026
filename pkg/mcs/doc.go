// Package mcs is the home of the Multi-Cluster Services API (KEP-1645,
// multicluster.x-k8s.io/v1beta1 ServiceExport and ServiceImport) in Liqo.
// Its subpackages merge the exports of a Service by the clusters of the
// clusterset (merge), validate a cluster's own exports (export), forge
// the ExportRecord that carries an export to a peer (record), write a
// cluster's records where its peers read them (publish), check what a
// peer publishes (trust), read the peers' records into the store the
// export controller and the imports read (clusterset), and keep each
// cluster's imports (imports). The controller manager runs them all.
//
// # The clusterset
//
// The clusterset of a cluster is the clusters it is peered with, in either
// role, and namespace sameness holds: namespace ns is the same namespace in
// every cluster, offloaded or not. A cluster imports the exports of its
// direct peers only. No cluster relays another's export: that would be
// publishing endpoints of a cluster other than its own.
//
// # Which side writes what
//
// A peering is reached in one direction: the consumer holds credentials for
// the provider (package remotecluster, one Cluster per provider, the only
// way to reach it), and the provider cannot reach the consumer. Both
// directions of a pair's exports travel over that one connection, through
// the consumer's tenant namespace on the provider (liqo-tenant-<consumer>):
//
//   - The consumer writes there, through its Cluster for the provider, the
//     record (an ExportRecord, offloading.liqo.io) of each of its valid
//     exports: the merge.Export of the Service
//     and the EndpointSlices of its ready endpoints, labelled
//     multicluster.kubernetes.io/source-cluster=<consumer>.
//   - The provider writes there, in its own cluster, the records of its own
//     exports, labelled source-cluster=<provider>, and the consumer reads
//     them through the same Cluster's cache of that namespace.
//   - Each cluster writes in its own cluster only what it imports: in
//     namespace ns a ServiceImport of the merged Service (merge.Merge), a
//     selector-less ClusterSetIP Service of our own that the ServiceImport
//     names in its IPs (none for a Headless import), and one EndpointSlice
//     per source cluster, labelled multicluster.kubernetes.io/service-name,
//     multicluster.kubernetes.io/source-cluster and managed by liqo. The
//     cluster's own export is part of its import, its endpoints as they
//     are.
//
// # Trust
//
// Records are peer input, validated by their receiver, never by their
// sender's forge:
//
//   - The provider reads, in liqo-tenant-<consumer>, only the records
//     labelled source-cluster=<consumer>: a record claiming another cluster,
//     the provider itself included, is refused. The provider's webhook
//     (replica.validate.liqo.io) also refuses the consumer any write to a
//     record there that does not name it as source, the provider's own
//     records included, and counts the consumer's records in its object
//     budget.
//   - An endpoint is accepted only if its address lies in the source
//     cluster's own pod or external CIDRs as the receiver's network
//     Configuration for that cluster says (remapped when the fabric remaps
//     them, with ipam.Mapping as the reflection does), and is imported at
//     that remapped address; with no network fabric with the peer, none is
//     accepted: an export can only
//     publish endpoints of its own cluster's Service, never arbitrary
//     addresses (the receiver's Services, the nodes, another cluster).
//   - Names, ports and the other merged properties are checked as a
//     Service would check them before they reach merge.Merge; a record
//     failing a check is ignored, with a Warning Event naming its cluster,
//     and its Accepted condition says why.
//
// Package trust holds those checks (trust.Export, trust.Endpoints).
package mcs
