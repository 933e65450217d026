// Package controllermanager will run the consumer- and provider-side
// controllers in one process: foreign clusters, tenants and identities,
// resource slices and quotas, virtual nodes, namespace offloading, ShadowPods.
// Not implemented yet: it arrives with the peering and offloading work.
package controllermanager
