package slices

import (
	"maps"

	"k8s.io/apimachinery/pkg/util/validation"
)

// RuntimeClassLabelPrefix prefixes the labels, set to "true", that tell a
// consumer which runtime classes a provider offers its pods
// (--offered-runtime-classes): the provider's virtual node carries one per
// class, so that a NamespaceOffloading's cluster selector, or a pod's node
// affinity, can pick the providers offering, say, nvidia.
const RuntimeClassLabelPrefix = "runtimeclass.liqo.io/"

// NodeLabels are the labels a slice gives the virtual nodes standing for
// this provider: its cluster labels, and one per offered runtime class. A
// class whose name does not fit a label's name (over 63 characters) is
// offered all the same, but not labelled; a cluster label of the same key
// wins.
func NodeLabels(clusterLabels map[string]string, runtimeClasses []string) map[string]string {
	if len(runtimeClasses) == 0 {
		return clusterLabels
	}
	out := make(map[string]string, len(clusterLabels)+len(runtimeClasses))
	for _, c := range runtimeClasses {
		if key := RuntimeClassLabelPrefix + c; len(validation.IsQualifiedName(key)) == 0 {
			out[key] = "true"
		}
	}
	maps.Copy(out, clusterLabels)
	return out
}
