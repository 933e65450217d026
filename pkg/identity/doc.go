// Package identity manages a cluster's peering keys and the nonce handshake.
//
// A cluster has two Ed25519 key pairs, each created at first start and kept
// in its own Secret of the liqo namespace: the identity, whose public key
// providers know the cluster by and whose private key signs handshakes only,
// and the TLS client key of the certificates providers issue. In the
// handshake a provider checks that a consumer holds the identity it
// presented: the consumer signs the provider's nonce together with both
// cluster IDs and the client key it asks a certificate for.
package identity
