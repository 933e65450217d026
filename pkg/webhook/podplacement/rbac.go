package podplacement

// The controller manager's rights for placing pods: the NamespaceOffloading
// of a pod's namespace, and the pods in conflict with its strategy,
// reported in an Event, then unmarked.
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=namespaceoffloadings,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch;patch
