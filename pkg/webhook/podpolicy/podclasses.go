package podpolicy

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Classes tells what the provider has of the priority and runtime classes
// a consumer's pod names. Implementations must be safe for concurrent use.
type Classes interface {
	// Priority returns the value of the PriorityClass name; found is
	// false if the provider has none of that name.
	Priority(ctx context.Context, name string) (value int32, found bool, err error)
	// RuntimeClass tells whether the provider has the RuntimeClass name.
	RuntimeClass(ctx context.Context, name string) (found bool, err error)
}

// apiClasses reads the classes from the API server. It is asked only for
// the rare pod naming a class (the reflection drops the consumer's
// priority classes), so a cache of every class would cost more than the
// reads it saves.
type apiClasses struct{ reader client.Reader }

var _ Classes = apiClasses{}

// APIClasses are the classes reader reads from the API server.
func APIClasses(reader client.Reader) Classes { return apiClasses{reader} }

func (c apiClasses) Priority(ctx context.Context, name string) (int32, bool, error) {
	var pc schedulingv1.PriorityClass
	err := c.reader.Get(ctx, types.NamespacedName{Name: name}, &pc)
	if apierrors.IsNotFound(err) {
		return 0, false, nil
	}
	return pc.Value, err == nil, err
}

func (c apiClasses) RuntimeClass(ctx context.Context, name string) (bool, error) {
	err := c.reader.Get(ctx, types.NamespacedName{Name: name}, &nodev1.RuntimeClass{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// vetPriority refuses priority classes a consumer may not name: a
// priority class decides whose pods the scheduler evicts to make room. The
// system classes (system-*, or a value above HighestUserPriority) would
// preempt the provider's own components and are never admitted; others are
// if the provider has them, at most at its MaxPriority, and among its
// PriorityClasses when it lists them.
func (p *PodPolicy) vetPriority(ctx context.Context, spec *corev1.PodSpec, path *field.Path, classes Classes) ([]string, error) {
	var bad []string
	if spec.Priority != nil {
		// The API server derives it from the class; a value of the
		// consumer's own would only be refused later, less clearly.
		bad = append(bad, fmt.Sprintf("%s must not be set, got %d: the priority class decides it", path.Child("priority"), *spec.Priority))
	}
	c := spec.PriorityClassName
	if c == "" {
		return bad, nil
	}
	f := path.Child("priorityClassName")
	if strings.HasPrefix(c, "system-") {
		return append(bad, fmt.Sprintf("%s %q is a system priority class: offloaded pods may not preempt the provider's own components", f, c)), nil
	}
	if len(p.PriorityClasses) > 0 && !slices.Contains(p.PriorityClasses, c) {
		return append(bad, fmt.Sprintf("%s must be empty or one of %s, got %q: the provider decides the priority of offloaded pods",
			f, strings.Join(p.PriorityClasses, ", "), c)), nil
	}
	value, found, err := classes.Priority(ctx, c)
	switch {
	case err != nil:
		return nil, fmt.Errorf("reading PriorityClass %s: %w", c, err)
	case !found:
		bad = append(bad, fmt.Sprintf("%s %q is no priority class of the provider", f, c))
	case value > HighestUserPriority:
		bad = append(bad, fmt.Sprintf("%s %q is a system priority class (value %d, above %d): offloaded pods may not preempt the provider's own components",
			f, c, value, HighestUserPriority))
	case value > p.maxPriority():
		bad = append(bad, fmt.Sprintf("%s %q has value %d, above %d, the highest the provider lets offloaded pods have",
			f, c, value, p.maxPriority()))
	}
	return bad, nil
}

// vetRuntime refuses runtime classes the provider does not offer: a
// runtime class picks the sandbox the pod runs in, or none, and some
// reach further than their name says (the NVIDIA runtime hands a
// container every GPU it asks for in an environment variable, outside the
// device plugin's accounting), so only the classes the provider vouches
// for are admitted, and only while it has them.
func (p *PodPolicy) vetRuntime(ctx context.Context, spec *corev1.PodSpec, path *field.Path, classes Classes) ([]string, error) {
	c := spec.RuntimeClassName
	if c == nil {
		return nil, nil
	}
	f := path.Child("runtimeClassName")
	if !slices.Contains(p.RuntimeClasses, *c) {
		offered := "none"
		if len(p.RuntimeClasses) > 0 {
			offered = strings.Join(p.RuntimeClasses, ", ")
		}
		return []string{fmt.Sprintf("%s %q is not offered by the provider, which offers %s: the provider decides the runtime of offloaded pods",
			f, *c, offered)}, nil
	}
	found, err := classes.RuntimeClass(ctx, *c)
	if err != nil {
		return nil, fmt.Errorf("reading RuntimeClass %s: %w", *c, err)
	}
	if !found {
		return []string{fmt.Sprintf("%s %q is offered by the provider, which has no RuntimeClass of that name (yet)", f, *c)}, nil
	}
	return nil, nil
}
