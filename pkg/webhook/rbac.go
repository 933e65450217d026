package webhook

// The controller manager's rights for the admission webhooks' server; each
// handler's package holds the rights of what it reads.

// Their configurations: in the chart, the chart's two, which the leader
// keeps trusting the serving keys; as a local process, this process writes
// them, creating them when missing (a create names no object yet, so it
// cannot be narrowed to them).
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations;validatingwebhookconfigurations,verbs=get;list;watch;patch;update,resourceNames=liqo-mutation;liqo-validation
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations;validatingwebhookconfigurations,verbs=create

// The serving keys every replica serves, in a Secret of the namespace.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create;update
