package auth

// The controller manager's rights for the authentication handshake.

// Nonces and signed nonces are Secrets in tenant namespaces; the Identity
// reconciler writes the kubeconfig Secret it owns. The signer reads the
// namespace's labels before signing; the Tenant reconciler pins the
// consumer's key on its tenant namespace.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;patch

// The provider serves Tenants, the consumer turns Identities into
// kubeconfigs. The finalizers subresource is what setting them as the
// blocking owners of a RoleBinding or a Secret takes where the
// OwnerReferencesPermissionEnforcement admission plugin is on.
// +kubebuilder:rbac:groups=authentication.liqo.io,resources=tenants,verbs=get;list;watch
// +kubebuilder:rbac:groups=authentication.liqo.io,resources=tenants/status,verbs=patch
// +kubebuilder:rbac:groups=authentication.liqo.io,resources=tenants/finalizers,verbs=update
// +kubebuilder:rbac:groups=authentication.liqo.io,resources=identities,verbs=get;list;watch;update
// +kubebuilder:rbac:groups=authentication.liqo.io,resources=identities/status,verbs=patch
// +kubebuilder:rbac:groups=authentication.liqo.io,resources=identities/finalizers,verbs=update

// The consumer's client certificate comes from the cluster's certificates
// API: the Tenant reconciler requests it, approves it (once the signed
// nonce proved who asks) for the kube-apiserver-client signer only, and
// deletes the request once served.
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests/approval,verbs=update
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=signers,verbs=approve,resourceNames=kubernetes.io/kube-apiserver-client

// The consumer's RoleBinding in its tenant namespace: bind on the one
// ClusterRole it references, rather than every right that role grants.
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=rolebindings,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles,verbs=bind,resourceNames=liqo-remote-controlplane
