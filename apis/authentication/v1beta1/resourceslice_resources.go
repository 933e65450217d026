package v1beta1

import (
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/liqo-go/liqo/pkg/consts"
)

// DefaultResources is what a slice asks for when it names nothing, as the
// documentation states: 4 CPUs, 8Gi of memory, 110 pods and 20Gi of
// ephemeral storage. A slice naming some of them asks for the default of
// the others (see WithDefaultResources). Ephemeral storage is among them
// because a virtual node without it refuses every pod with an
// ephemeral-storage request or limit (the scheduler reads a missing
// capacity as zero), and such pods are common (emptyDir size limits,
// charts setting limits).
func DefaultResources() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("4"),
		corev1.ResourceMemory:           resource.MustParse("8Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("20Gi"),
	}
}

// WithDefaultResources is the request a slice's resources make: every one
// of cpu, memory, pods and ephemeral-storage the slice does not name is
// asked for at its default, so that the Quota always bounds them. A slice
// naming only pods would otherwise leave its consumer's cpu and memory
// unbounded (a Quota bounds only what it lists). The default rather than
// zero: it is what naming nothing asks for, and what liqoctl's flags ask
// for when left out, so the slice gets no more than an empty one and
// remains usable by pods that request cpu or memory.
func WithDefaultResources(requested corev1.ResourceList) corev1.ResourceList {
	out := requested.DeepCopy()
	if out == nil {
		out = corev1.ResourceList{}
	}
	for name, q := range DefaultResources() {
		if _, ok := out[name]; !ok {
			out[name] = q
		}
	}
	return out
}

// CanonicalResources renders a resource list in a stable form, to tell
// whether a request changed since it was decided: the provider records it
// in consts.DecidedAnnotation, and liqoctl compares with it.
func CanonicalResources(l corev1.ResourceList) string {
	parts := make([]string, 0, len(l))
	for _, name := range slices.Sorted(maps.Keys(l)) {
		q := l[name]
		parts = append(parts, string(name)+"="+q.String())
	}
	return strings.Join(parts, ",")
}

// Accepted reports whether the provider accepted both the consumer and the
// resources of s, and granted some.
func (s *ResourceSlice) Accepted() bool {
	var authOK, resOK bool
	for _, c := range s.Status.Conditions {
		switch c.Type {
		case ResourceSliceAuthentication:
			authOK = c.Status == ResourceSliceAccepted
		case ResourceSliceResources:
			resOK = c.Status == ResourceSliceAccepted
		}
	}
	return authOK && resOK && len(s.Status.Resources) > 0
}

// WantsVirtualNode reports whether the consumer creates the VirtualNode of
// s itself once it is accepted: unless its annotation
// consts.CreateVirtualNodeAnnotation says "false".
func (s *ResourceSlice) WantsVirtualNode() bool {
	return s.Annotations[consts.CreateVirtualNodeAnnotation] != "false"
}
