// Package gatewaynodes holds nothing but the markers of the ClusterRole
// liqo-gateway-nodes (gateway.GatewayNodesClusterRole of
// pkg/controllermanager/gateway), which make generate writes to
// deploy/charts/liqo/files/rbac/liqo-gateway-nodes.yaml.
//
// The controller manager binds it cluster-wide to every gateway's
// ServiceAccount: the overlay back to each node needs the Nodes'
// addresses, and the gateways translate the IPs (the local addresses
// peers reach through them, such as the API server's); and their metrics
// endpoint asks the API server who its callers are and whether they may
// get /metrics.
package gatewaynodes

// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups=ipam.liqo.io,resources=ips,verbs=get;list;watch
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
