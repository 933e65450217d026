// Package tenancy tells, for the provider's admission webhooks, who a
// request comes from and where a consumer may write: a consumer is known by
// the identity this cluster issued it (user liqo-consumer-<cluster id> in
// the consumers' group), owns the twin namespaces labelled with its cluster
// ID, and starts no new ShadowPod while its Tenant is not Active.
package tenancy
