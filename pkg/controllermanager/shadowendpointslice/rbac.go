package shadowendpointslice

// The controller manager's rights for the ShadowEndpointSlices, on the
// provider: each owns (blocking) the EndpointSlice made for it; the twin
// namespace's labels and the consumer's network Configuration decide what
// it may hold.
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=shadowendpointslices,verbs=get;list;watch
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=shadowendpointslices/status,verbs=patch
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=shadowendpointslices/finalizers,verbs=update
// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=networking.liqo.io,resources=configurations,verbs=get;list;watch
