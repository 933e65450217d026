package v1beta1

// CIDR is an IP network in CIDR notation whose host bits are zero, such as
// 10.244.0.0/16. Both IPv4 and IPv6 networks are accepted; a value with host
// bits set (10.244.0.1/16) is refused rather than silently truncated, because
// it usually means a typo in the prefix length. The text must be the
// canonical one (::/4, not ::0/4): controllers compare CIDRs as strings,
// so two spellings of one network would pass for two networks.
// +kubebuilder:validation:MaxLength=43
// +kubebuilder:validation:XValidation:rule="isCIDR(self) && string(cidr(self).masked()) == self",messageExpression="'\"' + self + '\" is not a network in CIDR notation with zero host bits, in its canonical form, such as 10.244.0.0/16 or fd00::/8'"
type CIDR string

// String returns the CIDR as text.
func (c CIDR) String() string { return string(c) }

// IP is an IPv4 address in dotted-decimal notation, such as 10.70.0.1. The
// addresses the fabric allocates and translates are IPv4 only.
// +kubebuilder:validation:MaxLength=15
// +kubebuilder:validation:XValidation:rule="isIP(self) && ip(self).family() == 4",messageExpression="'\"' + self + '\" is not an IPv4 address such as 10.70.0.1'"
type IP string

// String returns the address as text.
func (i IP) String() string { return string(i) }

// Address is where a gateway can be reached from the other cluster: an IP
// address (IPv4 or IPv6) or a DNS name.
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=253
// +kubebuilder:validation:XValidation:rule="isIP(self) || !format.dns1123Subdomain().validate(self).hasValue()",messageExpression="'\"' + self + '\" is neither an IP address nor a DNS name'"
type Address string

// ReadyCondition is the condition type a gateway (GatewayServer or
// GatewayClient) reports as True once its pod runs and, for a server, its
// endpoint is published in the status.
const ReadyCondition = "Ready"

// Reasons of a gateway's Ready condition.
const (
	GatewayReasonReady          = "GatewayReady"
	GatewayReasonKeysInvalid    = "KeysInvalid"
	GatewayReasonSecretNotFound = "SecretNotFound"
	GatewayReasonApplyFailed    = "ApplyFailed"
	GatewayReasonPodNotRunning  = "PodNotRunning"
	GatewayReasonPodNotReady    = "PodNotReady"
	// GatewayReasonNoEndpoint: a server's Service has no address the peer
	// can reach yet (a load balancer still allocating one).
	GatewayReasonNoEndpoint = "EndpointPending"
)

// GatewayResourceLabel marks the objects that belong to a gateway, such as
// the PublicKey of the peer, so that the gateway's controllers select them.
const GatewayResourceLabel = "networking.liqo.io/gateway-resource"

// GatewayActiveLabel (value "true") marks the one gateway pod of a gateway
// that carries the tunnel: the replica holding the gateway's Lease. The
// server's Service selects only it, and the nodes route to it; the other
// replicas stand by, ready to take over.
const GatewayActiveLabel = "networking.liqo.io/active"

// DefaultMTU is the MTU of the tunnel when a gateway does not set one: it
// leaves room for the WireGuard and node-tunnel headers on a 1500-byte
// underlay. Both ends of a tunnel must use the same value.
const DefaultMTU = 1340

// DefaultGatewayPort is the UDP port a GatewayServer listens on when its
// endpoint does not set one.
const DefaultGatewayPort = 51840
