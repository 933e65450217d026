// Package identity manages a cluster's peering identity: an Ed25519 key pair
// created at first start and kept in a Secret of the liqo namespace, and the
// nonce handshake through which a provider checks that a consumer holds the
// private key of the public key it presented.
package identity
