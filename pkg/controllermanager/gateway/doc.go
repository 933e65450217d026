// Package gateway runs the network fabric's gateways: for every
// GatewayServer and GatewayClient of a peering it keeps the WireGuard key
// pair (generated here, in the cluster, and never sent anywhere: only the
// public half leaves, as a PublicKey the peering copies to the other side),
// the gateway Deployment of one pod running our gateway image, its
// ServiceAccount and rights, and, for a server, the UDP Service the other
// cluster dials. The status tells the endpoint to dial (the Service's
// node port on the gateway pod's node, its load balancer or its cluster
// IP) and the gateway pod's address, which the nodes' overlay targets.
//
// The gateway pod itself (cmd/liqo-gateway) sets up the tunnel, the NAT
// and the connection check; this package only places it.
package gateway
