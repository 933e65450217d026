package foreigncluster

// The controller manager's rights for the ForeignClusters: it writes one
// per peer from what it reads of the peering.
// +kubebuilder:rbac:groups=core.liqo.io,resources=foreignclusters,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=core.liqo.io,resources=foreignclusters/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=namespaces;nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups=authentication.liqo.io,resources=tenants;identities,verbs=get;list;watch
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=virtualnodes;quotas,verbs=get;list;watch
// +kubebuilder:rbac:groups=networking.liqo.io,resources=configurations;gatewayservers;gatewayclients;connections,verbs=get;list;watch
// The out-of-band peering requests (Secrets) keep a ForeignCluster.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch
