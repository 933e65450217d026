package publish

// The controller manager's rights for publishing exports: it reads the
// exports, their Services and EndpointSlices, the peers (Tenants and
// Identities), and writes the records in the consumers' tenant namespaces.
// +kubebuilder:rbac:groups=multicluster.x-k8s.io,resources=serviceexports,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch
// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=get;list;watch
// +kubebuilder:rbac:groups=authentication.liqo.io,resources=tenants;identities,verbs=get;list;watch
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=exportrecords,verbs=get;list;watch;create;update;patch;delete
