package offloading

// The controller manager's rights for namespace offloading.

// The consumer: NamespaceOffloadings (a finalizer, the selector error
// annotation, the status), the NamespaceMap of each provider it writes
// entries into and replicates, the virtual nodes that stand for the
// providers, and the scheduling label on the offloaded namespaces.
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=namespaceoffloadings,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=namespaceoffloadings/status,verbs=patch
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=namespacemaps,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=namespacemaps/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=nodes,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch;patch

// The provider: twin namespaces (created, labelled for Pod Security,
// deleted when no map wants them), their ResourceQuota and NetworkPolicies
// (the egress one removed when the provider turns it off; the nodes'
// addresses are kept out of it), read with the consumer's Configuration
// and Tenant, and the consumer's
// RoleBinding in each: bind on the one ClusterRole it references, rather
// than every right that role grants.
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=create;delete
// +kubebuilder:rbac:groups="",resources=resourcequotas,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=networking.liqo.io,resources=configurations,verbs=list;watch
// +kubebuilder:rbac:groups=authentication.liqo.io,resources=tenants,verbs=list;watch
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=rolebindings,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=bind,resourceNames=liqo-remote-offloading
