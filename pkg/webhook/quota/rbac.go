package quota

// The controller manager's rights for the quota ledger: the consumers'
// Quotas and ShadowPods, whose usage is written into the Quotas' status.
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=shadowpods;quotas,verbs=get;list;watch
// +kubebuilder:rbac:groups=offloading.liqo.io,resources=quotas/status,verbs=patch
