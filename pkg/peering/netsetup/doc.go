// Package netsetup sets up the network fabric between two clusters, given
// a client for each: the Configurations (each cluster's CIDRs, given to the
// other and remapped there), the gateway server and client, and the
// exchange of their public keys; and takes it down. liqoctl network
// connect runs it with an admin kubeconfig for each cluster; the consumer's
// controller manager runs it for an out-of-band peering, with the peering
// user's credentials on the provider.
package netsetup
