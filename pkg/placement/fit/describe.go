package fit

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Only is l restricted to the resources requests names.
func Only(l, requests corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name := range requests {
		out[name] = l[name]
	}
	return out
}

// Describe writes a resource list as cpu=…, memory=…, in name order.
func Describe(l corev1.ResourceList) string {
	if len(l) == 0 {
		return "nothing"
	}
	parts := make([]string, 0, len(l))
	for _, name := range slices.Sorted(maps.Keys(l)) {
		q := l[name]
		parts = append(parts, fmt.Sprintf("%s=%s", name, q.String()))
	}
	return strings.Join(parts, ", ")
}
