package tenancy

// The controller manager's rights for telling consumers apart: the
// namespaces (whose labels name the consumer of a twin) and the consumers'
// Tenants.
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=authentication.liqo.io,resources=tenants,verbs=list;watch
