// Package reflected judges, on a provider, the objects besides ShadowPods
// that consumers write: the Services, Secrets, ConfigMaps, Ingresses,
// PersistentVolumeClaims and ShadowEndpointSlices of their reflection in
// their twin namespaces, as the provider's ReflectedPolicy allows (no
// external IPs, no Service type beyond ClusterIP unless allowed, no
// ServiceAccount token Secret, Ingresses naming their own hosts and no
// snippet annotations); the NamespaceMaps and ResourceSlices they replicate
// into their tenant namespace, which must be their own replicas; and the
// Events they record there, which must be about their own objects. Every
// write is also held to the consumer's ObjectBudget.
package reflected
