package podsecurity

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// container is one container of a pod spec with the field path and the
// words that name it in messages.
type container struct {
	*corev1.Container
	path *field.Path
	kind string
}

// containers lists every container of spec, init and ephemeral ones
// included: each runs on the node with the privileges it asks for.
func containers(spec *corev1.PodSpec, specPath *field.Path) []container {
	out := make([]container, 0, len(spec.InitContainers)+len(spec.Containers)+len(spec.EphemeralContainers))
	for i := range spec.InitContainers {
		out = append(out, container{&spec.InitContainers[i], specPath.Child("initContainers").Index(i), "init container"})
	}
	for i := range spec.Containers {
		out = append(out, container{&spec.Containers[i], specPath.Child("containers").Index(i), "container"})
	}
	for i := range spec.EphemeralContainers {
		// The two types share their fields by design; Kubernetes' own
		// visitors convert the same way.
		c := (*corev1.Container)(&spec.EphemeralContainers[i].EphemeralContainerCommon)
		out = append(out, container{c, specPath.Child("ephemeralContainers").Index(i), "ephemeral container"})
	}
	return out
}

// violation words one refusal: the field at fault, what it must be, and
// the control of the standard it breaks. who names the container, if any.
func violation(who string, path *field.Path, must string, level Level, control string) string {
	msg := fmt.Sprintf("%s %s (Pod Security %s: %s)", path, must, level, control)
	if who != "" {
		return who + ": " + msg
	}
	return msg
}

// who names a container in messages, as the resource checks do.
func (c container) who() string { return fmt.Sprintf("%s %q", c.kind, c.Name) }
