package fabric

// The controller manager's rights for the node agent's objects, applied
// (server-side apply: create and patch, whose request names the object)
// under their one name. The agent's ClusterRole grants only rights the
// manager holds itself (Rules, listed last): so it may write and bind that
// role with neither escalate nor bind.
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=create;patch,resourceNames=liqo-fabric
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=create;patch,resourceNames=liqo-fabric
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterrolebindings,verbs=create;patch,resourceNames=liqo-fabric
// +kubebuilder:rbac:groups=apps,resources=daemonsets,verbs=create;patch,resourceNames=liqo-fabric
// +kubebuilder:rbac:groups=networking.liqo.io,resources=gatewayservers;gatewayclients;configurations,verbs=get;list;watch
