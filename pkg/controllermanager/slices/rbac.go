package slices

// The controller manager's rights for the ResourceSlices.

// Both sides: the consumer replicates its slices and copies the decision
// (status and its annotation) back; the provider decides and marks them.
// A slice owns (blocking) its Quota and its VirtualNode.
// +kubebuilder:rbac:groups=authentication.liqo.io,resources=resourceslices,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=authentication.liqo.io,resources=resourceslices/status,verbs=update;patch
// +kubebuilder:rbac:groups=authentication.liqo.io,resources=resourceslices/finalizers,verbs=update

// The provider: the Tenant authenticates a slice, the Nodes and the other
// Quotas bound what it may grant, the Quota records the grant; a Drained
// Tenant's ShadowPods are evicted (deleted).
// +kubebuilder:rbac:groups=authentication.liqo.io,resources=tenants,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=nodes,verbs=list;watch
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=quotas,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=shadowpods,verbs=list;watch;delete

// The provider offers its StorageClasses in the slice's status.
// +kubebuilder:rbac:groups=storage.k8s.io,resources=storageclasses,verbs=get;list;watch

// The provider publishes in each slice what its nodes can still take: it
// reads every Node and, of every Pod, the node, phase and requests.
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch
