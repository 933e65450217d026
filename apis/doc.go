// Package apis holds the CRD Go types of the liqo API groups (core, authentication,
// offloading, networking, ipam), with generated deepcopy functions and CRD
// manifests (make generate). The types arrive with the peering work.
package apis
