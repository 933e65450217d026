package webhook

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/liqo-go/liqo/pkg/podsecurity"
)

// PodPolicy is what a provider lets its consumers' pods ask for. The zero
// value is the safe default: Pod Security baseline, no priority class, no
// runtime class, only the volumes, annotations and tolerations that reach
// nothing of the provider's. Each list widens (or, for ReservedTaints,
// narrows) the built-in rules; none can lift the baseline level.
type PodPolicy struct {
	// Level is the Pod Security Standards level twin namespaces enforce
	// (through Pod Security Admission) and the ShadowPod webhook checks;
	// baseline if unset.
	Level podsecurity.Level
	// PriorityClasses consumers' pods may name, besides none.
	PriorityClasses []string
	// RuntimeClasses consumers' pods may name, besides none.
	RuntimeClasses []string
	// Annotations consumers' pods may carry besides the built-in ones
	// (allowedAnnotations): exact keys, or "<prefix>/*" for every key
	// under a prefix.
	Annotations []string
	// VolumeTypes consumers' pods may use besides the built-in ones
	// (allowedVolumeTypes), by their API name (nfs, csi, ephemeral...).
	VolumeTypes []string
	// ReservedTaints are taint keys consumers' pods may not tolerate,
	// besides the built-in ones (reservedTaints): those of nodes the
	// provider keeps for itself.
	ReservedTaints []string
}

// AddFlags adds the policy's flags to fs.
func (p *PodPolicy) AddFlags(fs *pflag.FlagSet) {
	fs.Var(&p.Level, "pod-security-level", "Pod Security Standards level (baseline or restricted) that consumers' pods must meet: "+
		"enforced by Pod Security Admission in the twin namespaces and checked by the ShadowPod webhook")
	fs.StringSliceVar(&p.PriorityClasses, "allowed-priority-classes", p.PriorityClasses,
		"priority classes consumers' pods may name (default: none)")
	fs.StringSliceVar(&p.RuntimeClasses, "allowed-runtime-classes", p.RuntimeClasses,
		"runtime classes consumers' pods may name (default: none)")
	fs.StringSliceVar(&p.Annotations, "allowed-pod-annotations", p.Annotations,
		"annotation keys, or <prefix>/* patterns, consumers' pods may carry besides unprefixed keys and the built-in safe list (e.g. prometheus.io/*)")
	fs.StringSliceVar(&p.VolumeTypes, "allowed-volume-types", p.VolumeTypes,
		"volume types consumers' pods may use besides "+strings.Join(allowedVolumeTypes, ", ")+" (e.g. csi, ephemeral, nfs; never hostPath)")
	fs.StringSliceVar(&p.ReservedTaints, "reserved-taint-keys", p.ReservedTaints,
		"taint keys of nodes kept for the provider's own workloads, which consumers' pods may not tolerate "+
			"(besides node-role.kubernetes.io/*, node.kubernetes.io/unschedulable and the virtual-node taint)")
}

// Validate reports the first bad setting in words a user can act on.
func (p *PodPolicy) Validate() error {
	if err := p.Level.Validate(); err != nil {
		return fmt.Errorf("--pod-security-level: %w", err)
	}
	for _, c := range p.PriorityClasses {
		if errs := validation.IsDNS1123Subdomain(c); len(errs) > 0 {
			return fmt.Errorf("--allowed-priority-classes: %q is no priority class name: %s", c, strings.Join(errs, "; "))
		}
		if strings.HasPrefix(c, "system-") {
			return fmt.Errorf("--allowed-priority-classes: %q is reserved for the cluster's own components, which a consumer's pod could then preempt", c)
		}
	}
	for _, c := range p.RuntimeClasses {
		if errs := validation.IsDNS1123Subdomain(c); len(errs) > 0 {
			return fmt.Errorf("--allowed-runtime-classes: %q is no runtime class name: %s", c, strings.Join(errs, "; "))
		}
	}
	for _, a := range p.Annotations {
		if err := validAnnotationPattern(a); err != nil {
			return fmt.Errorf("--allowed-pod-annotations: %w", err)
		}
	}
	known := podsecurity.VolumeTypes()
	for _, v := range p.VolumeTypes {
		if v == "hostPath" {
			return errors.New("--allowed-volume-types: hostPath is never allowed: it exposes the node's file system (Pod Security baseline)")
		}
		if !slices.Contains(known, v) {
			return fmt.Errorf("--allowed-volume-types: %q is no volume type (known: %s)", v, strings.Join(known, ", "))
		}
	}
	for _, k := range p.ReservedTaints {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("--reserved-taint-keys: %q is no taint key: %s", k, strings.Join(errs, "; "))
		}
	}
	return nil
}

// validAnnotationPattern accepts an annotation key or "<prefix>/*".
func validAnnotationPattern(a string) error {
	if prefix, ok := strings.CutSuffix(a, "/*"); ok {
		if errs := validation.IsDNS1123Subdomain(prefix); len(errs) > 0 {
			return fmt.Errorf("%q: %q is no annotation prefix: %s", a, prefix, strings.Join(errs, "; "))
		}
		return nil
	}
	if errs := validation.IsQualifiedName(a); len(errs) > 0 {
		return fmt.Errorf("%q is neither an annotation key nor <prefix>/*: %s", a, strings.Join(errs, "; "))
	}
	return nil
}
