// Package virtualkubelet will run one virtual node per peered provider:
// node registration and lease, pod reflection to ShadowPods, the generic
// resource reflectors and the kubelet API proxy. Not implemented yet.
package virtualkubelet
