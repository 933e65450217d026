package controllermanager

// The controller manager's own rights for what Run does before and around
// its controllers; every package it runs states its own next to its code
// (rbac.go), and make generate gathers them into the ClusterRole
// liqo-controller-manager of the chart.

// bootstrap: the components' namespace and the cluster-ID ConfigMap (a
// create names no object yet, so it cannot be narrowed to it).
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=create
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;update,resourceNames=liqo-clusterid-configmap
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=create

// The peering ClusterRoles are the chart's to install; a self-provisioned
// manager (a local process on a bare cluster, with an administrator's
// credentials) applies them unless it finds them as generated. Writing
// them is no right of the manager's: it may bind them, and with escalate
// on a role it may bind it could grant itself anything.
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=get,resourceNames=liqo-remote-controlplane;liqo-remote-offloading;liqo-gateway;liqo-gateway-nodes

// The manager's own ClusterRole, the owner of what it makes for the install
// (see kit.InstallOwner).
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=get,resourceNames=liqo-controller-manager

// Leader election, and the Events it and every controller's recorder
// write.
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;update,resourceNames=liqo-controller-manager
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=create
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
