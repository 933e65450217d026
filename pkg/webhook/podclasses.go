package webhook

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// vetClasses refuses priority and runtime classes the provider did not
// allow: a priority class decides whose pods the scheduler evicts
// (system-node-critical would preempt the provider's own), and a runtime
// class picks the sandbox the pod runs in, or none.
func (p *PodPolicy) vetClasses(spec *corev1.PodSpec, path *field.Path) []string {
	var bad []string
	if c := spec.PriorityClassName; c != "" && !slices.Contains(p.PriorityClasses, c) {
		bad = append(bad, fmt.Sprintf("%s must be %s, got %q: the provider decides the priority of offloaded pods",
			path.Child("priorityClassName"), allowedOrEmpty(p.PriorityClasses), c))
	}
	if spec.Priority != nil {
		// The API server derives it from the class; a value of the
		// consumer's own would only be refused later, less clearly.
		bad = append(bad, fmt.Sprintf("%s must not be set, got %d: the priority class decides it", path.Child("priority"), *spec.Priority))
	}
	if c := spec.RuntimeClassName; c != nil && !slices.Contains(p.RuntimeClasses, *c) {
		bad = append(bad, fmt.Sprintf("%s must be %s, got %q: the provider decides the runtime of offloaded pods",
			path.Child("runtimeClassName"), allowedOrEmpty(p.RuntimeClasses), *c))
	}
	return bad
}

// allowedOrEmpty words what an allow-list admits besides nothing.
func allowedOrEmpty(allowed []string) string {
	if len(allowed) == 0 {
		return "empty"
	}
	return "empty or one of " + strings.Join(allowed, ", ")
}
