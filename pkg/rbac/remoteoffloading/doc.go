// Package remoteoffloading holds nothing but the markers of the ClusterRole
// liqo-remote-offloading, which make generate writes to
// deploy/charts/liqo/files/rbac/liqo-remote-offloading.yaml.
//
// It is what a consumer may do in its twin namespaces on the provider (the
// provider binds it in each twin to the consumer's user): run pods through
// ShadowPods (never Pods directly), publish endpoints through
// ShadowEndpointSlices (never EndpointSlices directly, so the provider
// decides what its Services route to), keep the reflected objects they
// need and the volumes of its pods, and read its pods' status, logs,
// events and usage.
package remoteoffloading

// +kubebuilder:rbac:groups=offloading.liqo.io,resources=shadowpods;shadowendpointslices,verbs=get;list;watch;create;update;patch;delete

// No ServiceAccounts: one the consumer made in a twin would be the
// provider's to serve tokens for (issue 15); the consumer's pods get their
// tokens from the consumer.
// +kubebuilder:rbac:groups="",resources=configmaps;secrets;services,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=ingresses,verbs=get;list;watch;create;update;patch;delete

// The remote volumes of its offloaded pods (the storage fabric): judged by
// the reflected objects' webhook, counted by the twin's quota.
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=get;list;watch;create;delete

// Its pods' status, logs, events, and kubectl exec, attach and
// port-forward through the virtual node's kubelet API.
// +kubebuilder:rbac:groups="",resources=pods;events,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods/log,verbs=get
// +kubebuilder:rbac:groups="",resources=pods/exec;pods/attach;pods/portforward,verbs=create;get

// Its pods' usage as the provider's metrics.k8s.io API measures it (kubectl
// top on the consumer, through the virtual node's kubelet API): only in
// the twins, never nodes/proxy or the node metrics.
// +kubebuilder:rbac:groups=metrics.k8s.io,resources=pods,verbs=get;list
