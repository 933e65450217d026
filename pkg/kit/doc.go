// Package kit is what every controller shares: one condition setter
// (bounded messages, valid reasons, a transition time that moves only when
// the status does) and one status writer (a merge patch, sent only when
// something changed), so that every custom resource reports the same way
// and an unchanged reconcile costs no API write; and one reconciler of
// shadow objects into real ones (ShadowReconciler: a ShadowPod into a Pod,
// a ShadowEndpointSlice into an EndpointSlice), so that creating,
// colliding, conflicting and deleting work alike for every shadow kind.
package kit
