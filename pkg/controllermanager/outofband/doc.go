// Package outofband performs, on the consumer, the out-of-band peerings
// liqoctl peer out-of-band asks for: liqoctl records what the provider's
// administrator handed over (the provider's API server URL, its cluster ID
// and a peering user's token) in the request Secret of the provider's
// tenant namespace (peering.OutOfBandRequest), and this controller does
// what needs the provider, so that liqoctl needs to reach the consumer's
// API server only:
//
//  1. verify that the provider's API server presents a certificate of the
//     CA in the token, before the token is sent anywhere;
//  2. ask who the token authenticates (a peering user) and check the
//     provider's cluster ID against the request's;
//  3. claim the peering user for this cluster (a generic one sets itself
//     up; one claimed by another cluster is refused);
//  4. keep the user's kubeconfig (for liqoctl unpeer out-of-band);
//  5. authenticate: the steps of liqoctl peer (pkg/peering), with the
//     token's client for the provider;
//  6. ask for the ResourceSlice, if the request says so, and wait for the
//     provider's decision (the virtual node follows, made by the vnode
//     controllers).
//
// Progress and failures are the ForeignCluster's OutOfBandPeeringStatus
// condition (Pending with the step, Established, NotReady while a failed
// step is retried, Error when retrying cannot help) for the request the
// ForeignCluster's annotation names, and Events on the ForeignCluster.
// A request is performed once: the same request, once Established or
// given up, is not performed again; liqoctl gives each run a new ID.
package outofband
