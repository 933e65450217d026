package outofband

// The controller manager's rights for out-of-band peerings: it reads the
// request Secrets and writes the peering user's kubeconfig, the tenant
// namespace and the signed nonce (Secrets), the Identity and the
// ResourceSlice of the provider, the network fabric's objects on its side
// (the provider's Configuration, the gateway client, the server's public
// key), and reports on its ForeignCluster.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=authentication.liqo.io,resources=identities;resourceslices,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups=core.liqo.io,resources=foreignclusters,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups=core.liqo.io,resources=foreignclusters/status,verbs=patch
// +kubebuilder:rbac:groups=networking.liqo.io,resources=configurations;gatewayclients;publickeies,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups=ipam.liqo.io,resources=networks,verbs=get;list;watch
