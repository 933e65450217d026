// Package kubeletapi serves the kubelet API of the virtual nodes: the
// consumer's API server calls it for kubectl logs, exec, attach and
// port-forward on offloaded pods, and metrics-server for their usage, and each call is carried out on the pod's
// twin in the provider cluster through the provider's API server, with the
// consumer's credentials there.
//
// One Server serves every virtual node of a controller manager, each on a
// port of its own (Server.Open), since neither the API server nor
// metrics-server names the node in a request: the port tells the node. A
// request about a pod is routed by the pod it names (a Resolver tells the
// pod's provider and its name there). /stats/summary and /metrics/resource
// serve the usage of the node's pods as their provider measured it (its
// metrics.k8s.io PodMetrics, read by a UsageReader), turned into the
// cumulative counters a kubelet serves, so that kubectl top works for
// offloaded pods and virtual nodes.
//
// As a kubelet in webhook mode does, the Server authenticates callers by
// client certificate (verified against the cluster's client CA, read from
// kube-system/extension-apiserver-authentication) or bearer token
// (TokenReview), and authorizes them with a SubjectAccessReview on the
// nodes/proxy, nodes/log, nodes/stats or nodes/metrics subresource of the
// pod's node. Unauthenticated requests get 401, unauthorized ones 403.
//
// Its serving certificate is issued at start by the cluster's
// kubernetes.io/kubelet-serving signer for the advertised IP (the API server
// may verify kubelet certificates against the cluster CA), or self-signed
// when configured so; the private key never leaves the process.
package kubeletapi
