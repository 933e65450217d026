// Package trust checks, as pure functions, what a peer publishes of its
// exports before the receiver acts on it (see package mcs: the receiver
// validates, the sender's forge is no defence): that the export is the
// sender's own and well formed, and that its endpoints are addresses of
// the sender's own cluster, translated to where the receiver reaches them.
package trust
