package vnode

// The controller manager's rights for the VirtualNodes. The node and pod
// reflection they start state theirs in pkg/virtualkubelet and its
// reflection subpackage.

// A consumer's accepted ResourceSlice owns (blocking) its VirtualNode; the
// reconciler keeps a finalizer on it and reads its kubeconfig Secret.
// +kubebuilder:rbac:groups=authentication.liqo.io,resources=resourceslices,verbs=get;list;watch
// +kubebuilder:rbac:groups=authentication.liqo.io,resources=resourceslices/finalizers,verbs=update
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=virtualnodes,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=virtualnodes/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get

// The translation of the provider's pod addresses reads the network
// Configuration of the provider and the API server's IP.
// +kubebuilder:rbac:groups=networking.liqo.io,resources=configurations,verbs=get;list;watch
// +kubebuilder:rbac:groups=ipam.liqo.io,resources=ips,verbs=get;list;watch
