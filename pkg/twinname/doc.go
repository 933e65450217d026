// Package twinname decides, on a provider, which namespace names a
// consumer may have as twins of its offloaded namespaces, and which
// consumer cluster IDs the provider accepts, so that no consumer takes a
// namespace the provider has, or will want when it installs well-known
// software (flux-system, ingress-nginx, ...).
//
// Both inputs come from the consumer: the twin names from its
// NamespaceMap, the cluster ID from its Tenant. The functions are pure,
// so they are table-tested and fuzzed without a cluster; whether a name is
// taken by an existing namespace is the caller's to check, against the API
// server.
package twinname
