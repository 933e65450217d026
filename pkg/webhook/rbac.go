package webhook

// The controller manager's rights for the admission webhooks.

// Their configurations: in the chart, the chart's two, which the leader
// keeps trusting the serving keys; as a local process, this process writes
// them, creating them when missing (a create names no object yet, so it
// cannot be narrowed to them).
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations;validatingwebhookconfigurations,verbs=get;list;watch;patch;update,resourceNames=liqo-mutation;liqo-validation
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations;validatingwebhookconfigurations,verbs=create

// The serving keys every replica serves, in a Secret of the namespace.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create;update

// What the webhooks decide on: the namespaces and their offloading, the
// consumers' Tenants, Quotas and ShadowPods (whose usage is written into
// the Quotas' status), and the Ingresses' hosts.
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=namespaceoffloadings;shadowpods;quotas,verbs=get;list;watch
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=quotas/status,verbs=patch
// +kubebuilder:rbac:groups=authentication.liqo.io,resources=tenants,verbs=list;watch
// +kubebuilder:rbac:groups=networking.k8s.io,resources=ingresses,verbs=list;watch
// The sizes of the objects consumers write in bulk, for their budget.ObjectBudget
// (only the consumers' are listed, by label, and only their sizes kept).
// +kubebuilder:rbac:groups="",resources=configmaps;secrets;services;persistentvolumeclaims,verbs=list;watch
// +kubebuilder:rbac:groups=networking.k8s.io,resources=ingresses,verbs=list;watch
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=shadowendpointslices;namespacemaps,verbs=list;watch
// +kubebuilder:rbac:groups=authentication.liqo.io,resources=resourceslices,verbs=list;watch
// The priority and runtime classes a consumer's pod names, read one at a
// time (podpolicy.APIClasses).
// +kubebuilder:rbac:groups=scheduling.k8s.io,resources=priorityclasses,verbs=get
// +kubebuilder:rbac:groups=node.k8s.io,resources=runtimeclasses,verbs=get

// Pods in conflict with their namespace's strategy: reported in an Event,
// then unmarked.
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch;patch
