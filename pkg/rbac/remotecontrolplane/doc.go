// Package remotecontrolplane holds nothing but the markers of the
// ClusterRole liqo-remote-controlplane, which make generate writes to
// deploy/charts/liqo/files/rbac/liqo-remote-controlplane.yaml.
//
// It is what a consumer's control plane may do in its tenant namespace on
// the provider (the provider binds it there to the consumer's user):
// negotiate resources, read its Tenant and Quotas, ask for namespaces,
// exchange the records of Multi-Cluster Services exports.
// Nothing else; in particular no Secrets and no Pods.
package remotecontrolplane

// Negotiating resources: the consumer writes its ResourceSlices, and reads
// the Tenant and the Quotas the provider grants it.
// +kubebuilder:rbac:groups=authentication.liqo.io,resources=resourceslices,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=authentication.liqo.io,resources=tenants,verbs=get;list;watch
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=quotas,verbs=get;list;watch

// Asking for namespaces: the consumer's NamespaceMap replicas.
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=namespacemaps,verbs=get;list;watch;create;update;patch;delete

// Multi-Cluster Services (package mcs): the consumer writes the records of
// its exports, and marks the provider's records it reads accepted or not.
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=exportrecords,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=exportrecords/status,verbs=patch

// The Events the consumer's controllers record about its objects there.
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
