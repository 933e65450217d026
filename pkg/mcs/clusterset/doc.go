// Package clusterset is what a cluster knows of its direct peers' exports
// (see package mcs): the Reader reads each peer's ExportRecords (a
// consumer's in its tenant namespace here, a provider's in this cluster's
// tenant namespace there, through the provider's remotecluster.Cluster),
// checks every one with trust.Record, marks it Accepted or not, and keeps
// the accepted ones in a Store, which the export controller (as its
// Clusterset) and the imports read.
package clusterset
