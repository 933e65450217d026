// Package gateway is the gateway pod of the network fabric (the
// liqo-gateway command): one end of the WireGuard tunnel of one peering.
// It brings up the tunnel with the key pair its controller generated,
// takes the peer's public key from the PublicKey the peering copied into
// its namespace, translates the peer's (remapped) addresses with the
// Configuration's CIDRs, routes what comes out of the tunnel back to the
// node of each destination pod, and reports the tunnel's health and
// latency in its Connection.
package gateway
