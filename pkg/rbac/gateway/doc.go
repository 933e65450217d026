// Package gateway holds nothing but the markers of the ClusterRole
// liqo-gateway (gateway.GatewayClusterRole of
// pkg/controllermanager/gateway), which make generate writes to
// deploy/charts/liqo/files/rbac/liqo-gateway.yaml.
//
// It is what a gateway pod may do in its own tenant namespace, where the
// controller manager binds it to the gateway's ServiceAccount: read the
// peer's public key, the network Configuration and its own gateway, and
// report the tunnel in its Connection.
package gateway

// +kubebuilder:rbac:groups=networking.liqo.io,resources=publickeies;configurations;gatewayservers;gatewayclients,verbs=get;list;watch
// +kubebuilder:rbac:groups=networking.liqo.io,resources=connections,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=networking.liqo.io,resources=connections/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// Active/standby replicas: the gateway's Lease, and the active label on
// its own pod (the tenant namespace holds only gateway pods).
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update
// +kubebuilder:rbac:groups="",resources=pods,verbs=patch
