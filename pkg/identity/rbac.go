package identity

// The controller manager's rights for Ensure, which it calls at start:
// the cluster's key pairs live in two Secrets of its namespace.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create
