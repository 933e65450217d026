package reflection

// The controller manager's rights for the reflection, which runs in it for
// every virtual node and acts on this cluster with its credentials (on the
// provider it acts with the consumer's, under liqo-remote-offloading).

// The virtual node's pods: watched by node, their status written as a
// kubelet would, deleted once what ran for them remotely is gone, their
// restarts before a re-created remote pod recorded in an annotation; their
// ServiceAccount tokens requested for the provider's copies.
// +kubebuilder:rbac:groups="",resources=pods,verbs=list;watch;patch;delete
// +kubebuilder:rbac:groups="",resources=pods/status,verbs=update
// +kubebuilder:rbac:groups="",resources=serviceaccounts/token,verbs=create

// The reflected kinds, watched in each offloaded namespace, and the
// NamespaceMap that lists those namespaces.
// +kubebuilder:rbac:groups="",resources=configmaps;secrets;services,verbs=list;watch
// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=list;watch
// +kubebuilder:rbac:groups=networking.k8s.io,resources=ingresses,verbs=list;watch
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=namespacemaps,verbs=get;list;watch
// The NamespaceOffloadings, without which no map entry is reflected.
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=namespaceoffloadings,verbs=get;list;watch

// The provider's Events about its pods, copied onto the local pods.
// +kubebuilder:rbac:groups="",resources=events,verbs=get;create;update

// The storage fabric's remote volumes: the provider's PVC's capacity shown
// on the local PVC (its status) and its PV, once the provider's PVC binds.
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims;persistentvolumes,verbs=get;update
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims/status,verbs=update
