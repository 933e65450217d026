package teardown

// The controller manager's rights to force out a consumer's objects: it
// patches away the finalizers it did not put, on every kind the consumer
// may write in its twins (liqo-remote-offloading's, listed past the cache)
// and on its replicated NamespaceMaps and ResourceSlices, and deletes the
// pods left at once.
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;delete
// +kubebuilder:rbac:groups="",resources=configmaps;secrets;services;persistentvolumeclaims,verbs=list;patch
// +kubebuilder:rbac:groups=networking.k8s.io,resources=ingresses,verbs=list;patch
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=shadowpods;shadowendpointslices;namespacemaps,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=authentication.liqo.io,resources=resourceslices,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
