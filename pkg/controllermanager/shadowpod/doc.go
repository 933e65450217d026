// Package shadowpod runs, on a provider cluster, the controller that turns
// every ShadowPod a consumer offloaded into a real Pod and mirrors that Pod's
// phase and readiness back into the ShadowPod's status.
//
// It works on the provider alone: a Pod deleted while the consumer is
// unreachable is recreated all the same, since the ShadowPod is the
// provider's own record of what must run.
package shadowpod
