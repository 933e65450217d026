// Package v1alpha1 holds the ipam.liqo.io/v1alpha1 API: the networks and
// addresses the local IPAM hands out.
//
// A Network asks for a CIDR: the IPAM allocates it as is when it overlaps
// nothing already allocated, and otherwise a free network of the same size,
// which it reports in status.cidr (the remapped CIDR). The pod, service,
// external, internal and reserved networks of the cluster are Networks, and
// so is every CIDR of a peer listed in a networking.liqo.io Configuration.
//
// An IP asks for a remapped address for a local address that is not a pod's,
// so that peers can reach it: status.ip is that address in the external CIDR
// (or in the network spec.networkRef names), and the gateways translate
// between the two.
//
// +kubebuilder:object:generate=true
// +groupName=ipam.liqo.io
package v1alpha1
