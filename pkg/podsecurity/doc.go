// Package podsecurity holds the Kubernetes Pod Security Standards as a
// provider applies them to its consumers' pods, twice: the twin namespaces
// carry the labels that make the API server's Pod Security Admission
// enforce a level on every Pod created there (NamespaceLabels), and the
// ShadowPod webhook runs the same checks on the pod spec a consumer sends
// (Check), so that a refusal reaches the consumer when it creates the
// ShadowPod, naming the field, rather than later as a pod that never
// starts.
//
// The checks are those of the standards' "latest" version as of Kubernetes
// 1.34, written from the published standard; everything here is a pure
// function of its arguments.
package podsecurity
