// Package completion implements `liqoctl completion SHELL`, the shell
// completion scripts that cobra generates for the whole command tree, and
// the dynamic completions the scripts ask the binary for: the contexts,
// clusters and users of the kubeconfig, namespaces, peer and consumer
// cluster IDs read from the cluster, and the values of enum flags.
package completion
