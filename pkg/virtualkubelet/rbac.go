package virtualkubelet

// The controller manager's rights for the virtual nodes, which run in it
// and act on this cluster with its credentials: the Node (registered,
// adopted, deleted; its status patched by the node controller) and its
// Lease in kube-node-lease.
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;create;update;delete
// +kubebuilder:rbac:groups="",resources=nodes/status,verbs=patch
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update;delete
