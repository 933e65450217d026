package podpolicy

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/liqo-go/liqo/pkg/podsecurity"
)

// PodPolicy is what a provider lets its consumers' pods ask for. The zero
// value is the default, compatible with ordinary workloads and safe: Pod
// Security baseline; any of the provider's priority classes but the
// system ones; no runtime class; only the volumes, annotations and
// tolerations that reach nothing of the provider's, with the annotations
// of meshes and cloud identity agents kept off the real pod. Each field
// widens (or, for ReservedTaints, MaxPriority and RuntimeClasses,
// decides) a rule; none can lift the baseline level or admit a system
// priority class.
type PodPolicy struct {
	// Level is the Pod Security Standards level twin namespaces enforce
	// (through Pod Security Admission) and the ShadowPod webhook checks;
	// baseline if unset.
	Level podsecurity.Level
	// PriorityClasses, if set, are the only priority classes consumers'
	// pods may name; unset, any class the provider has (below
	// MaxPriority) may be named.
	PriorityClasses []string
	// MaxPriority is the highest value of a priority class consumers'
	// pods may name; nil is the highest value a class outside the system
	// ones may have (HighestUserPriority). Lower it to keep the provider's
	// own workloads out of reach of the consumers' preemption.
	MaxPriority *int32
	// RuntimeClasses are the runtime classes the provider offers its
	// consumers: their pods may name these, and the virtual nodes standing
	// for this provider tell them. None by default.
	RuntimeClasses []string
	// Annotations consumers' pods may carry besides the built-in ones
	// (builtInAnnotations): exact keys, or "<prefix>/*" for every key
	// under a prefix.
	Annotations []string
	// MetadataOnlyAnnotations are the annotation keys (or "<prefix>/*")
	// a consumer's ShadowPod may carry that its real pod does not: the
	// consumer's own mesh and identity settings, which a system of the
	// provider would act upon. Nil is DefaultMetadataOnlyAnnotations;
	// empty refuses them all. Annotations win over this list.
	MetadataOnlyAnnotations []string
	// Labels consumers' pods may carry besides the built-in ones
	// (BuiltInLabels) and the metadata-only keys (kept off the pod):
	// exact keys, or "<prefix>/*".
	Labels []string
	// VolumeTypes consumers' pods may use besides the built-in ones
	// (allowedVolumeTypes), by their API name (nfs, csi...).
	VolumeTypes []string
	// ReservedTaints are taint keys consumers' pods may not tolerate,
	// besides the built-in ones (reservedTaints): those of nodes the
	// provider keeps for itself.
	ReservedTaints []string
	// DedicatedTaints are taint keys of nodes the provider keeps for some
	// workloads (GPU nodes, system pools): consumers' pods may tolerate
	// one only when they request the resource of its name, which their
	// Quota must grant. Nil is DefaultDedicatedTaints; empty lets them
	// tolerate any of these.
	DedicatedTaints []string
	// AllowResourceClaims lets consumers' pods claim devices through
	// dynamic resource allocation (resourceClaims), which no Quota counts.
	AllowResourceClaims bool
	// KeepImagePullPolicy keeps the imagePullPolicy of consumers' pods;
	// by default the provider makes their containers pull Always, so that
	// none runs a private image another tenant pulled on the same node.
	KeepImagePullPolicy bool
	// VirtualStorageClass is this cluster's virtual StorageClass, which
	// the claims of consumers' ephemeral volumes may not use (set from the
	// storage options, as ReflectedPolicy's).
	VirtualStorageClass string
}

// HighestUserPriority is the highest value a priority class may have
// outside the system ones (Kubernetes' HighestUserDefinablePriority is a
// billion; system-cluster-critical and system-node-critical are twice as
// much): classes at or above it are refused whatever the policy, as they
// would preempt the provider's own cluster components.
const HighestUserPriority = 1_000_000_000 - 1

// The chart values and flags of each rule, named in refusals so that the
// consumer reading its pod's status can tell the provider's administrator
// what to change.
const (
	levelRule      = "offloading.podPolicy.securityLevel (--pod-security-level; baseline at least)"
	priorityRule   = "offloading.podPolicy.maxPriority and allowedPriorityClasses (--max-pod-priority, --allowed-priority-classes; never a system class)"
	runtimeRule    = "offloading.podPolicy.offeredRuntimeClasses (--offered-runtime-classes)"
	annotationRule = "offloading.podPolicy.allowedAnnotations and metadataOnlyAnnotations (--allowed-pod-annotations, --metadata-only-pod-annotations)"
	labelRule      = "offloading.podPolicy.allowedLabels and metadataOnlyAnnotations (--allowed-pod-labels, --metadata-only-pod-annotations)"
	volumeRule     = "offloading.podPolicy.allowedVolumeTypes (--allowed-volume-types; never hostPath)"
	schedulingRule = "the provider's scheduling rule (fixed; offloading.podPolicy.reservedTaintKeys, --reserved-taint-keys, reserves more taints)"
	identityRule   = "the provider's credentials rule (fixed: the pod's tokens come from the consumer)"
	claimRule      = "the provider's volume claim rule (fixed, as for the consumer's PVCs)"
	dedicatedRule  = "offloading.podPolicy.dedicatedTaintKeys (--dedicated-taint-keys; a taint named after a resource is tolerated by pods requesting it)"
	draRule        = "offloading.podPolicy.allowResourceClaims (--allow-resource-claims)"
)

// AddFlags adds the policy's flags to fs.
func (p *PodPolicy) AddFlags(fs *pflag.FlagSet) {
	fs.Var(&p.Level, "pod-security-level", "Pod Security Standards level (baseline or restricted) that consumers' pods must meet: "+
		"enforced by Pod Security Admission in the twin namespaces and checked by the ShadowPod webhook")
	fs.StringSliceVar(&p.PriorityClasses, "allowed-priority-classes", p.PriorityClasses,
		"the only priority classes consumers' pods may name (default: any of this cluster's up to --max-pod-priority; never a system class)")
	fs.Var(&priorityValue{&p.MaxPriority}, "max-pod-priority",
		"highest value of a priority class consumers' pods may name (default and most: "+strconv.Itoa(HighestUserPriority)+
			", any class but the system ones; lower it so that they cannot preempt this cluster's own workloads)")
	fs.StringSliceVar(&p.RuntimeClasses, "offered-runtime-classes", p.RuntimeClasses,
		"runtime classes this cluster offers its consumers: their pods may name them, and their virtual nodes are labelled with them (default: none)")
	fs.StringSliceVar(&p.RuntimeClasses, "allowed-runtime-classes", p.RuntimeClasses, "")
	_ = fs.MarkDeprecated("allowed-runtime-classes", "use --offered-runtime-classes")
	fs.StringSliceVar(&p.Annotations, "allowed-pod-annotations", p.Annotations,
		"annotation keys, or <prefix>/* patterns, consumers' pods may carry besides unprefixed keys and the built-in safe list (e.g. example.com/team)")
	fs.StringSliceVar(&p.Labels, "allowed-pod-labels", p.Labels,
		"label keys, or <prefix>/* patterns, consumers' pods may carry besides unprefixed keys and the built-in inert ones "+
			"(app.kubernetes.io/*, helm.sh/chart, StatefulSets' and Jobs'; e.g. example.com/team)")
	if p.MetadataOnlyAnnotations == nil {
		p.MetadataOnlyAnnotations = slices.Clone(DefaultMetadataOnlyAnnotations)
	}
	fs.StringSliceVar(&p.MetadataOnlyAnnotations, "metadata-only-pod-annotations", p.MetadataOnlyAnnotations,
		"annotation keys, or <prefix>/* patterns, consumers' ShadowPods may carry but their pods do not, so that no system of this cluster acts on them "+
			"(empty: refused instead)")
	fs.StringSliceVar(&p.VolumeTypes, "allowed-volume-types", p.VolumeTypes,
		"volume types consumers' pods may use besides "+strings.Join(allowedVolumeTypes, ", ")+" (e.g. csi, nfs; never hostPath)")
	fs.StringSliceVar(&p.ReservedTaints, "reserved-taint-keys", p.ReservedTaints,
		"taint keys of nodes kept for the provider's own workloads, which consumers' pods may not tolerate "+
			"(besides node-role.kubernetes.io/*, node.kubernetes.io/unschedulable and the virtual-node taint)")
	if p.DedicatedTaints == nil {
		p.DedicatedTaints = slices.Clone(DefaultDedicatedTaints)
	}
	fs.StringSliceVar(&p.DedicatedTaints, "dedicated-taint-keys", p.DedicatedTaints,
		"taint keys of nodes this cluster dedicates to some workloads (GPU nodes, system pools), which consumers' pods may tolerate "+
			"only when they request the resource of the same name, within their Quota (empty: any of them may be tolerated)")
	fs.BoolVar(&p.AllowResourceClaims, "allow-resource-claims", p.AllowResourceClaims,
		"let consumers' pods claim devices through dynamic resource allocation (resourceClaims), which no Quota counts")
	fs.BoolVar(&p.KeepImagePullPolicy, "keep-image-pull-policy", p.KeepImagePullPolicy,
		"keep consumers' imagePullPolicy instead of Always, letting their pods run images other tenants pulled on the same node "+
			"without credentials (for nodes that cannot reach a registry)")
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
	if m := p.MaxPriority; m != nil && *m > HighestUserPriority {
		return fmt.Errorf("--max-pod-priority: %d is a system priority: at most %d, so that consumers' pods cannot preempt the cluster's own components",
			*m, HighestUserPriority)
	}
	for _, c := range p.RuntimeClasses {
		if errs := validation.IsDNS1123Subdomain(c); len(errs) > 0 {
			return fmt.Errorf("--offered-runtime-classes: %q is no runtime class name: %s", c, strings.Join(errs, "; "))
		}
	}
	for _, a := range p.Annotations {
		if err := ValidAnnotationPattern(a); err != nil {
			return fmt.Errorf("--allowed-pod-annotations: %w", err)
		}
	}
	for _, a := range p.MetadataOnlyAnnotations {
		if err := ValidAnnotationPattern(a); err != nil {
			return fmt.Errorf("--metadata-only-pod-annotations: %w", err)
		}
	}
	for _, l := range p.Labels {
		if err := ValidAnnotationPattern(l); err != nil {
			return fmt.Errorf("--allowed-pod-labels: %w", err)
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
	for flag, keys := range map[string][]string{"--reserved-taint-keys": p.ReservedTaints, "--dedicated-taint-keys": p.DedicatedTaints} {
		for _, k := range keys {
			if errs := validation.IsQualifiedName(k); len(errs) > 0 {
				return fmt.Errorf("%s: %q is no taint key: %s", flag, k, strings.Join(errs, "; "))
			}
		}
	}
	return nil
}

// maxPriority is MaxPriority or its default.
func (p *PodPolicy) maxPriority() int32 {
	if p.MaxPriority == nil {
		return HighestUserPriority
	}
	return min(*p.MaxPriority, HighestUserPriority)
}

// priorityValue is the flag of an optional int32.
type priorityValue struct{ v **int32 }

func (f *priorityValue) String() string {
	if f.v == nil || *f.v == nil {
		return ""
	}
	return strconv.Itoa(int(**f.v))
}

func (f *priorityValue) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		return fmt.Errorf("%q is no 32-bit integer", s)
	}
	v := int32(n)
	*f.v = &v
	return nil
}

func (f *priorityValue) Type() string { return "int32" }

// ValidAnnotationPattern accepts an annotation key or "<prefix>/*".
func ValidAnnotationPattern(a string) error {
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
