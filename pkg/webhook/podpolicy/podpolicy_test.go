package podpolicy

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/liqo-go/liqo/pkg/podsecurity"
	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
)

func plainPodSpec() *corev1.PodSpec {
	return &corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox"}}}
}

// fakeClasses are a provider's priority and runtime classes, for the
// policy's table tests (the webhook's tests read the API server's).
type fakeClasses struct {
	priorities map[string]int32
	runtimes   []string
}

func (f fakeClasses) Priority(_ context.Context, name string) (int32, bool, error) {
	v, ok := f.priorities[name]
	return v, ok, nil
}

func (f fakeClasses) RuntimeClass(_ context.Context, name string) (bool, error) {
	return slices.Contains(f.runtimes, name), nil
}

// providerClasses are what a provider typically has: the two system
// classes, its own production class, classes for batch work, and runtimes.
var providerClasses = fakeClasses{
	priorities: map[string]int32{"system-node-critical": 2000001000, "system-cluster-critical": 2000000000,
		"prod-critical": 1000000, "consumer-low": 1000, "disguised-critical": 1500000000},
	runtimes: []string{"nvidia", "gvisor", "runc-privileged"},
}

// vet is p's refusals of a pod in twin namespace "work", against
// providerClasses.
func vet(t *testing.T, p *PodPolicy, annotations map[string]string, spec *corev1.PodSpec) string {
	t.Helper()
	bad, err := p.Vet(context.Background(), "work", nil, annotations, spec, providerClasses)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(bad, "\n")
}

// TestPodPolicyWidens checks what each option lets through, and that
// without it the same pod is refused naming the field and the rule.
func TestPodPolicyWidens(t *testing.T) {
	tests := []struct {
		name        string
		policy      PodPolicy
		annotations map[string]string
		edit        func(*corev1.PodSpec)
		field, rule string
	}{
		{"an offered runtime class", PodPolicy{RuntimeClasses: []string{"gvisor"}}, nil,
			func(s *corev1.PodSpec) { s.RuntimeClassName = ptr.To("gvisor") },
			`spec.pod.runtimeClassName "gvisor" is not offered by the provider, which offers none`, runtimeRule},
		{"an allowed annotation key", PodPolicy{Annotations: []string{"example.com/team"}},
			map[string]string{"example.com/team": "shop"}, nil, "metadata.annotations[example.com/team] is not allowed", annotationRule},
		{"a metadata-only annotation", PodPolicy{MetadataOnlyAnnotations: []string{"example.com/*"}},
			map[string]string{"example.com/team": "shop"}, nil, "metadata.annotations[example.com/team] is not allowed", annotationRule},
		{"an allowed volume type", PodPolicy{VolumeTypes: []string{"csi"}}, nil, func(s *corev1.PodSpec) {
			s.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d"}}}}
		}, "spec.pod.volumes[0].csi must not be set", volumeRule},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := plainPodSpec()
			if tt.edit != nil {
				tt.edit(spec)
			}
			if bad := vet(t, &tt.policy, tt.annotations, spec); bad != "" {
				t.Errorf("refused under %+v: %q", tt.policy, bad)
			}
			bad := vet(t, &PodPolicy{MetadataOnlyAnnotations: []string{}}, tt.annotations, spec)
			if !strings.Contains(bad, tt.field) || !strings.Contains(bad, "[rule: "+tt.rule+"]") {
				t.Errorf("under a narrower policy: %q, want a refusal containing %q and its rule %q", bad, tt.field, tt.rule)
			}
		})
	}

	// A reserved taint narrows: tolerating it is refused.
	spec := plainPodSpec()
	spec.Tolerations = []corev1.Toleration{{Key: "example.com/dedicated", Operator: corev1.TolerationOpEqual, Value: "infra"}}
	if bad := vet(t, &PodPolicy{}, nil, spec); bad != "" {
		t.Errorf("a toleration of a custom taint under the default policy: %q", bad)
	}
	bad := vet(t, &PodPolicy{ReservedTaints: []string{"example.com/dedicated"}}, nil, spec)
	if !strings.Contains(bad, "spec.pod.tolerations[0] must not tolerate example.com/dedicated") {
		t.Errorf("a toleration of a reserved taint: %q", bad)
	}

	// Restricted adds its controls to the webhook's.
	bad = vet(t, &PodPolicy{Level: podsecurity.Restricted}, nil, plainPodSpec())
	if !strings.Contains(bad, "allowPrivilegeEscalation must be false") || !strings.Contains(bad, "[rule: "+levelRule+"]") {
		t.Errorf("a plain pod at restricted: %q", bad)
	}
}

// TestDefaultPodPolicyAdmits checks that the default policy admits what
// ordinary workloads carry, the pods of a GPU provider's seed included.
func TestDefaultPodPolicyAdmits(t *testing.T) {
	spec := plainPodSpec()
	spec.PriorityClassName = "consumer-low"
	spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
		VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: ptr.To("standard"),
			Resources: corev1.VolumeResourceRequirements{Requests: webhooktest.List("storage", "1Gi")}}}}}}}
	annotations := map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "9090",
		"sidecar.istio.io/inject": "true", "iam.amazonaws.com/role": "reader", "vault.hashicorp.com/agent-inject": "true"}
	if bad := vet(t, &PodPolicy{}, annotations, spec); bad != "" {
		t.Errorf("refused by the default policy: %q", bad)
	}
	// The seed's GPU provider offers its NVIDIA runtime.
	spec.RuntimeClassName = ptr.To("nvidia")
	if bad := vet(t, &PodPolicy{RuntimeClasses: []string{"nvidia"}}, annotations, spec); bad != "" {
		t.Errorf("refused by a provider offering nvidia: %q", bad)
	}
}

// TestPriorityRule checks that no policy admits a system priority class,
// by name or by value, and that the ceiling and the list bound the rest.
func TestPriorityRule(t *testing.T) {
	for _, tt := range []struct {
		policy PodPolicy
		class  string
		want   string // "" admitted
	}{
		{PodPolicy{}, "consumer-low", ""},
		{PodPolicy{}, "prod-critical", ""},
		{PodPolicy{}, "system-node-critical", `"system-node-critical" is a system priority class`},
		{PodPolicy{}, "system-made-up", `"system-made-up" is a system priority class`},
		{PodPolicy{}, "disguised-critical", `"disguised-critical" is a system priority class (value 1500000000, above 999999999)`},
		{PodPolicy{MaxPriority: ptr.To[int32](2000001000)}, "disguised-critical", "is a system priority class"},
		{PodPolicy{PriorityClasses: []string{"system-node-critical"}}, "system-node-critical", "is a system priority class"},
		{PodPolicy{}, "missing", `"missing" is no priority class of the provider`},
		{PodPolicy{MaxPriority: ptr.To[int32](10000)}, "prod-critical", `"prod-critical" has value 1000000, above 10000`},
		{PodPolicy{MaxPriority: ptr.To[int32](10000)}, "consumer-low", ""},
		{PodPolicy{PriorityClasses: []string{"consumer-low"}}, "prod-critical", "must be empty or one of consumer-low"},
	} {
		spec := plainPodSpec()
		spec.PriorityClassName = tt.class
		bad := vet(t, &tt.policy, nil, spec)
		if tt.want == "" && bad != "" || tt.want != "" && (!strings.Contains(bad, tt.want) || !strings.Contains(bad, priorityRule)) {
			t.Errorf("class %s under %+v: %q, want %q", tt.class, tt.policy, bad, tt.want)
		}
	}
}

// TestRuntimeRule: a runtime class is admitted only if offered and there.
func TestRuntimeRule(t *testing.T) {
	p := &PodPolicy{RuntimeClasses: []string{"nvidia", "kata"}}
	for class, want := range map[string]string{
		"nvidia":          "",
		"kata":            `"kata" is offered by the provider, which has no RuntimeClass of that name`,
		"runc-privileged": `"runc-privileged" is not offered by the provider, which offers nvidia, kata`,
	} {
		spec := plainPodSpec()
		spec.RuntimeClassName = ptr.To(class)
		bad := vet(t, p, nil, spec)
		if want == "" && bad != "" || want != "" && (!strings.Contains(bad, want) || !strings.Contains(bad, runtimeRule)) {
			t.Errorf("runtime class %s: %q, want %q", class, bad, want)
		}
	}
}

// TestEphemeralClaimRule: an ephemeral volume's claim may ask no more than
// a consumer's PVC.
func TestEphemeralClaimRule(t *testing.T) {
	p := &PodPolicy{VirtualStorageClass: "liqo"}
	for _, tt := range []struct {
		edit func(*corev1.PersistentVolumeClaimSpec)
		want string
	}{
		{func(s *corev1.PersistentVolumeClaimSpec) { s.VolumeName = "pv-of-another-tenant" }, "volumeClaimTemplate.spec.volumeName must not be set"},
		{func(s *corev1.PersistentVolumeClaimSpec) {
			s.DataSource = &corev1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: "db"}
		},
			"volumeClaimTemplate.spec.dataSource must not be set"},
		{func(s *corev1.PersistentVolumeClaimSpec) { s.StorageClassName = ptr.To("liqo") }, `storageClassName "liqo" is this provider's virtual class`},
		{func(s *corev1.PersistentVolumeClaimSpec) { s.StorageClassName = ptr.To("") }, `volumeClaimTemplate.spec.storageClassName must not be ""`},
	} {
		spec := plainPodSpec()
		claim := corev1.PersistentVolumeClaimSpec{Resources: corev1.VolumeResourceRequirements{Requests: webhooktest.List("storage", "1Gi")}}
		tt.edit(&claim)
		spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
			VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: claim}}}}}
		if bad := vet(t, p, nil, spec); !strings.Contains(bad, "spec.pod.volumes[0].ephemeral."+tt.want) && !strings.Contains(bad, tt.want) ||
			!strings.Contains(bad, claimRule) {
			t.Errorf("%q, want %q", bad, tt.want)
		}
	}
}

func TestAnnotationRule(t *testing.T) {
	p := &PodPolicy{}
	for key, want := range map[string]annotationFate{
		"team":                              carried,
		"checksum/config":                   carried,
		"kubectl.kubernetes.io/restartedAt": carried,
		"container.apparmor.security.beta.kubernetes.io/app": carried,
		"offloading.liqo.io/local-pod-uid":                   carried,
		"prometheus.io/scrape":                               carried,
		"sidecar.istio.io/inject":                            metadataOnly,
		"traffic.sidecar.istio.io/excludeOutboundIPRanges":   metadataOnly,
		"config.linkerd.io/skip-outbound-ports":              metadataOnly,
		"linkerd.io/inject":                                  metadataOnly,
		"iam.amazonaws.com/role":                             metadataOnly,
		"vault.hashicorp.com/agent-inject":                   metadataOnly,
		"kubectl.kubernetes.io/last-applied-configuration":   refused,
		"k8s.v1.cni.cncf.io/networks":                        refused,
		"cluster-autoscaler.kubernetes.io/safe-to-evict":     refused,
		"example.com/team":                                   refused,
		"liqo.io/offloading-conflict":                        refused,
	} {
		if got := p.annotationFate(key); got != want {
			t.Errorf("annotation %s: fate %v, want %v", key, got, want)
		}
	}
	// Allowing wins over metadata-only: a provider that wants its mesh to
	// act on its consumers' pods says so.
	p = &PodPolicy{Annotations: []string{"sidecar.istio.io/*"}}
	if got := p.annotationFate("sidecar.istio.io/inject"); got != carried || p.MetadataOnly("sidecar.istio.io/inject") {
		t.Errorf("an allowed mesh annotation: fate %v", got)
	}
	// An empty metadata-only list refuses them instead.
	if got := (&PodPolicy{MetadataOnlyAnnotations: []string{}}).annotationFate("sidecar.istio.io/inject"); got != refused {
		t.Errorf("a mesh annotation without the metadata-only list: fate %v", got)
	}
}

func TestPodPolicyFlags(t *testing.T) {
	var p PodPolicy
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	p.AddFlags(fs)
	if !slices.Equal(p.MetadataOnlyAnnotations, DefaultMetadataOnlyAnnotations) || p.MaxPriority != nil {
		t.Errorf("defaults %+v", p)
	}
	err := fs.Parse([]string{"--pod-security-level=restricted", "--allowed-priority-classes=low,batch", "--max-pod-priority=1000",
		"--offered-runtime-classes=nvidia", "--allowed-pod-annotations=example.com/*,example.org/team",
		"--metadata-only-pod-annotations=", "--allowed-volume-types=csi,nfs", "--reserved-taint-keys=example.com/dedicated"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Level != podsecurity.Restricted || len(p.PriorityClasses) != 2 || *p.MaxPriority != 1000 || p.RuntimeClasses[0] != "nvidia" ||
		len(p.Annotations) != 2 || p.MetadataOnlyAnnotations == nil || len(p.MetadataOnlyAnnotations) != 0 ||
		len(p.VolumeTypes) != 2 || p.ReservedTaints[0] != "example.com/dedicated" {
		t.Errorf("parsed %+v", p)
	}
	if err := p.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if err := fs.Parse([]string{"--allowed-runtime-classes=gvisor"}); err != nil || !slices.Equal(p.RuntimeClasses, []string{"gvisor"}) {
		t.Errorf("the deprecated --allowed-runtime-classes: %v, %v", err, p.RuntimeClasses)
	}
	if err := fs.Parse([]string{"--pod-security-level=privileged"}); err == nil {
		t.Error("--pod-security-level=privileged was accepted")
	}
	if err := fs.Parse([]string{"--max-pod-priority=high"}); err == nil {
		t.Error("--max-pod-priority=high was accepted")
	}

	for _, tt := range []struct {
		p    PodPolicy
		want string
	}{
		{PodPolicy{}, ""},
		{PodPolicy{Level: "privileged"}, "--pod-security-level"},
		{PodPolicy{PriorityClasses: []string{"system-node-critical"}}, "reserved for the cluster's own components"},
		{PodPolicy{PriorityClasses: []string{"Not_A_Name"}}, "no priority class name"},
		{PodPolicy{MaxPriority: ptr.To[int32](1000000000)}, "--max-pod-priority: 1000000000 is a system priority"},
		{PodPolicy{RuntimeClasses: []string{"Bad Name"}}, "no runtime class name"},
		{PodPolicy{Annotations: []string{"bad key!"}}, "neither an annotation key"},
		{PodPolicy{Annotations: []string{"Bad_Prefix/*"}}, "no annotation prefix"},
		{PodPolicy{MetadataOnlyAnnotations: []string{"bad key!"}}, "--metadata-only-pod-annotations"},
		{PodPolicy{VolumeTypes: []string{"hostPath"}}, "hostPath is never allowed"},
		{PodPolicy{VolumeTypes: []string{"nfsv5"}}, `"nfsv5" is no volume type`},
		{PodPolicy{ReservedTaints: []string{"bad key!"}}, "no taint key"},
	} {
		err := tt.p.Validate()
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("Validate(%+v) = %v, want %q", tt.p, err, tt.want)
		}
	}
}
