// Package imports keeps, in each cluster, the imports of the Services its
// clusterset exports (see package mcs): in namespace ns, the ServiceImport
// of the merged exports, the selector-less ClusterSetIP Service of our own
// it names in its IPs (none for a Headless import), and one EndpointSlice
// per exporting cluster. The objects are forged by pure functions
// (forge.go) and written with server-side apply.
package imports
