package ipam

// The controller manager's rights for the IPAM: Networks (the local CIDRs'
// and those a Configuration owns, blocking) and IPs are allocated here;
// Configurations get the local CIDRs, a label and their status. The API
// server's IP is read from Service default/kubernetes.
// +kubebuilder:rbac:groups=ipam.liqo.io,resources=networks;ips,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=ipam.liqo.io,resources=networks/status;ips/status,verbs=patch
// +kubebuilder:rbac:groups=networking.liqo.io,resources=configurations,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=networking.liqo.io,resources=configurations/status,verbs=patch
// +kubebuilder:rbac:groups=networking.liqo.io,resources=configurations/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=services,verbs=get,resourceNames=kubernetes
// The Nodes' addresses: their networks are routed locally, never to a peer.
// +kubebuilder:rbac:groups="",resources=nodes,verbs=list;watch
