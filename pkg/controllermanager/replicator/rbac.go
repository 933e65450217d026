package replicator

// The controller manager's rights for the replicators: the consumer's
// credentials for a provider come from its Identity and the kubeconfig
// Secret it names (remotecluster.Registry); each kind's package states the rights
// on the objects replicated.
// +kubebuilder:rbac:groups=authentication.liqo.io,resources=identities,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get
