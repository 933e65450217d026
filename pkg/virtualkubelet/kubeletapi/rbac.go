package kubeletapi

// The controller manager's rights for the virtual nodes' kubelet API.

// Its serving certificate: requested from the kubelet-serving signer,
// approved here (no kubelet stands behind it), for that signer only, and
// the request deleted once served.
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=certificatesigningrequests/approval,verbs=update
// +kubebuilder:rbac:groups=certificates.k8s.io,resources=signers,verbs=approve,resourceNames=kubernetes.io/kubelet-serving

// Its callers, authenticated and authorized as a kubelet does it: the
// client CA the API server publishes, TokenReviews, SubjectAccessReviews.
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch,resourceNames=extension-apiserver-authentication
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// The remote pod behind a local one: the pod, its virtual node, the
// consumer's credentials for that provider and the NamespaceMap naming
// the twin.
// +kubebuilder:rbac:groups="",resources=pods;nodes;secrets,verbs=get
// +kubebuilder:rbac:groups=authentication.liqo.io,resources=identities,verbs=get
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=namespacemaps,verbs=get
