// Package network will hold the network fabric: IPAM with CIDR remapping,
// the WireGuard gateway (kernel or wireguard-go) with nftables NAT and policy
// routing, and the in-cluster overlay. Not implemented yet.
package network
