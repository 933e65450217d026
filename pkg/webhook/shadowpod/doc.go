// Package shadowpod admits, on a provider, the ShadowPods its consumers
// create: only in their own twin namespaces, with their origin label,
// asking nothing the provider's PodPolicy forbids, with no negative or
// malformed quantity, within their Quota (counted as the scheduler counts
// the real pod, and reserved in the quota ledger so that concurrent
// creates cannot together exceed it) and within their ObjectBudget by
// size. A ShadowPod's resources never change once created, as the real
// pod's do not. A dry run is answered as the real request would be and
// reserves nothing.
package shadowpod
