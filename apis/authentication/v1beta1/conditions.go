package v1beta1

// ReadyCondition is the condition type reporting whether a Tenant or an
// Identity is usable: the provider's controller sets it on the Tenant, the
// consumer's on the Identity, and liqoctl waits for it.
const ReadyCondition = "Ready"

// ObjectBudgetPressureCondition is the condition type of a Tenant whose
// consumer keeps nearly as much (or as much) on its provider as its object
// budget allows: True, with reason ObjectBudgetNearLimit or
// ObjectBudgetExhausted; False while it has room.
const ObjectBudgetPressureCondition = "ObjectBudgetPressure"
