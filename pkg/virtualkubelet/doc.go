// Package virtualkubelet runs the virtual node that stands, in the consumer
// cluster, for one peered provider cluster.
//
// Run runs one virtual node whole: its Node (RunNode) and the reflection
// of its pods (subpackage reflection, whose provider's part the nodes of
// one provider share; the pure local→remote transformations are in
// subpackage forge). The caller (the VirtualNode reconciler) decides when
// a node runs and reports its status.
//
// RunNode registers the Node (or adopts the one a previous run left), keeps
// its status and its Lease in kube-node-lease fresh through virtual-kubelet's
// node controller, and probes the provider's API server (/readyz) every
// HealthCheckInterval. The probe decides the Node's Ready condition: when the
// provider cannot be reached the Node turns Ready=False with reason
// RemoteClusterUnreachable at once, while its Lease keeps being renewed, so
// the control plane sees a live node that says why it cannot run pods rather
// than a silent one whose status goes Unknown only after the grace period.
//
// DeleteNode removes the Node and its Lease once the peering ends.
//
// The Node publishes, as its InternalIP and kubelet endpoint, the address
// of the kubelet API that subpackage kubeletapi serves for every virtual
// node of the process (NodeConfig.Address and Port).
package virtualkubelet
