package gateway

// The controller manager's rights for the gateways: a GatewayServer or
// GatewayClient owns (blocking) its key Secret and the objects applied for
// it (server-side apply: create and patch) — ServiceAccount, RoleBinding,
// Service (servers) and Deployment —, and its status reads the gateway
// pod, its node and the Connection the pod writes.
// +kubebuilder:rbac:groups=networking.liqo.io,resources=gatewayservers;gatewayclients,verbs=get;list;watch
// +kubebuilder:rbac:groups=networking.liqo.io,resources=gatewayservers/status;gatewayclients/status,verbs=patch
// +kubebuilder:rbac:groups=networking.liqo.io,resources=gatewayservers/finalizers;gatewayclients/finalizers,verbs=update
// +kubebuilder:rbac:groups=networking.liqo.io,resources=connections,verbs=get;list;watch
// +kubebuilder:rbac:groups=networking.liqo.io,resources=connections/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch

// The gateways' RoleBindings to GatewayClusterRole and the one
// ClusterRoleBinding of them all to GatewayNodesClusterRole: bind on those
// two ClusterRoles, rather than every right they grant.
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=rolebindings,verbs=list;watch;create;patch
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterrolebindings,verbs=create;patch,resourceNames=liqo-gateway-nodes
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=bind,resourceNames=liqo-gateway;liqo-gateway-nodes
