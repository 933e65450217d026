package reflected

// The controller manager's rights for the reflected objects: the
// Ingresses, whose hosts another consumer's Ingress may not claim.
// +kubebuilder:rbac:groups=networking.k8s.io,resources=ingresses,verbs=list;watch
