package podpolicy

// The controller manager's rights for the priority and runtime classes a
// consumer's pod names, read one at a time (APIClasses).
// +kubebuilder:rbac:groups=scheduling.k8s.io,resources=priorityclasses,verbs=get
// +kubebuilder:rbac:groups=node.k8s.io,resources=runtimeclasses,verbs=get
