// Package mcs is the home of the Multi-Cluster Services API (KEP-1645,
// multicluster.x-k8s.io/v1beta1 ServiceExport and ServiceImport) in Liqo.
// Its subpackages merge the exports of a Service by the clusters of the
// clusterset (merge) and validate a cluster's own exports (export).
package mcs
