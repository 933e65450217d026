package shadowpod

// The controller manager's rights for the ShadowPods, on the provider: a
// ShadowPod owns (blocking) the Pod made for it, which the reconciler
// creates, relabels and replaces, and whose status it copies back. The
// consumer's network Configuration translates the addresses in the pod.
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=shadowpods,verbs=get;list;watch
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=shadowpods/status,verbs=patch
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=shadowpods/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups=networking.liqo.io,resources=configurations,verbs=get;list;watch
