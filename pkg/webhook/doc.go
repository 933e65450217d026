// Package webhook will serve the admission webhooks: pod mutation for the
// offloading strategy, ShadowPod validation (tenant origin and quota) and
// NamespaceOffloading validation. Not implemented yet.
package webhook
