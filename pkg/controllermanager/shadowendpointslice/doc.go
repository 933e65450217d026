// Package shadowendpointslice runs, on a provider cluster, the controller
// that turns every ShadowEndpointSlice a consumer reflected into a real
// EndpointSlice, so that the provider's copy of a Service also reaches the
// replicas running on the consumer and its other providers.
//
// The consumer never writes EndpointSlices on the provider: through the
// ShadowEndpointSlice the provider decides what the slice looks like (it
// marks it so that its own EndpointSlice controller leaves it alone) and
// where it may go (only into the consumer's own twin namespaces).
package shadowendpointslice
