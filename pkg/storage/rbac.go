package storage

// The provisioner's rights: the virtual PVCs and their PVs (its
// controllers, package provision, watch them, write them and Events, and
// read the StorageClasses), the real PVCs in the storage namespace, the
// nodes it reads where a volume is wanted; self-provisioning creates the
// StorageClass and the namespace.
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get;list;watch;create;delete;update;patch
// +kubebuilder:rbac:groups="",resources=persistentvolumes,verbs=get;list;watch;create;delete;update;patch
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=storage.k8s.io,resources=storageclasses,verbs=get;list;watch;create
