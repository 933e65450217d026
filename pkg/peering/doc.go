// Package peering holds the steps of a peering that act on one cluster or
// two, shared by liqoctl (peer, authenticate, the manual commands, each
// with the administrator's kubeconfigs) and the controller manager (the
// out-of-band peering, pkg/controllermanager/outofband, with a peering
// user's token for the provider): the tenant namespaces, the nonce and its
// signature, the Tenant and the Identity, the ResourceSlice and the wait
// for its virtual node; and the contract of an out-of-band peering request
// (OutOfBandRequest), which liqoctl writes and the manager reads.
//
// Each step is idempotent and waits for the controller it hands over to
// (wait.For), reporting through a Progress; none imports liqoctl.
package peering
