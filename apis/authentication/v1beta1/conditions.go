package v1beta1

// ReadyCondition is the condition type reporting whether a Tenant or an
// Identity is usable: the provider's controller sets it on the Tenant, the
// consumer's on the Identity, and liqoctl waits for it.
const ReadyCondition = "Ready"
