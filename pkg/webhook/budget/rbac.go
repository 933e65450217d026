package budget

// The controller manager's rights for the ObjectBudget: the sizes of the
// objects consumers write in bulk (only the consumers' are listed, by
// label, and only their sizes kept).
// +kubebuilder:rbac:groups="",resources=configmaps;secrets;services;persistentvolumeclaims,verbs=list;watch
// +kubebuilder:rbac:groups=networking.k8s.io,resources=ingresses,verbs=list;watch
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=shadowendpointslices;namespacemaps;exportrecords,verbs=list;watch
// +kubebuilder:rbac:groups=authentication.liqo.io,resources=resourceslices,verbs=list;watch
