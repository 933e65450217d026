package webhook

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/liqo-go/liqo/pkg/podsecurity"
)

func plainPodSpec() *corev1.PodSpec {
	return &corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox"}}}
}

// TestPodPolicyWidens checks what each option lets through, and that
// without it the same pod is refused naming the field.
func TestPodPolicyWidens(t *testing.T) {
	tests := []struct {
		name        string
		policy      PodPolicy
		annotations map[string]string
		edit        func(*corev1.PodSpec)
		field       string
	}{
		{"an allowed priority class", PodPolicy{PriorityClasses: []string{"consumer-low"}}, nil,
			func(s *corev1.PodSpec) { s.PriorityClassName = "consumer-low" }, "spec.pod.priorityClassName must be empty, got"},
		{"an allowed runtime class", PodPolicy{RuntimeClasses: []string{"gvisor"}}, nil,
			func(s *corev1.PodSpec) { s.RuntimeClassName = ptr.To("gvisor") }, "spec.pod.runtimeClassName must be empty, got"},
		{"an allowed annotation prefix", PodPolicy{Annotations: []string{"prometheus.io/*"}},
			map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "9090"}, nil,
			"metadata.annotations[prometheus.io/port], metadata.annotations[prometheus.io/scrape] are not allowed"},
		{"an allowed annotation key", PodPolicy{Annotations: []string{"example.com/team"}},
			map[string]string{"example.com/team": "shop"}, nil, "metadata.annotations[example.com/team] is not allowed"},
		{"an allowed volume type", PodPolicy{VolumeTypes: []string{"csi"}}, nil, func(s *corev1.PodSpec) {
			s.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "d"}}}}
		}, "spec.pod.volumes[0].csi must not be set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := plainPodSpec()
			if tt.edit != nil {
				tt.edit(spec)
			}
			if bad := tt.policy.vet("work", tt.annotations, spec); len(bad) > 0 {
				t.Errorf("refused under %+v: %q", tt.policy, bad)
			}
			bad := strings.Join((&PodPolicy{}).vet("work", tt.annotations, spec), "\n")
			if !strings.Contains(bad, tt.field) {
				t.Errorf("under the default policy: %q, want a refusal containing %q", bad, tt.field)
			}
		})
	}

	// A reserved taint narrows: tolerating it is refused.
	spec := plainPodSpec()
	spec.Tolerations = []corev1.Toleration{{Key: "example.com/dedicated", Operator: corev1.TolerationOpEqual, Value: "infra"}}
	if bad := (&PodPolicy{}).vet("work", nil, spec); len(bad) > 0 {
		t.Errorf("a toleration of a custom taint under the default policy: %q", bad)
	}
	bad := strings.Join((&PodPolicy{ReservedTaints: []string{"example.com/dedicated"}}).vet("work", nil, spec), "\n")
	if !strings.Contains(bad, "spec.pod.tolerations[0] must not tolerate example.com/dedicated") {
		t.Errorf("a toleration of a reserved taint: %q", bad)
	}

	// Restricted adds its controls to the webhook's.
	bad = strings.Join((&PodPolicy{Level: podsecurity.Restricted}).vet("work", nil, plainPodSpec()), "\n")
	if !strings.Contains(bad, "allowPrivilegeEscalation must be false") {
		t.Errorf("a plain pod at restricted: %q", bad)
	}
}

func TestAnnotationRule(t *testing.T) {
	p := &PodPolicy{}
	for key, allowed := range map[string]bool{
		"team":                              true,
		"checksum/config":                   true,
		"kubectl.kubernetes.io/restartedAt": true,
		"container.apparmor.security.beta.kubernetes.io/app": true,
		"offloading.liqo.io/local-pod-uid":                   true,
		"kubectl.kubernetes.io/last-applied-configuration":   false,
		"k8s.v1.cni.cncf.io/networks":                        false,
		"sidecar.istio.io/inject":                            false,
		"traffic.sidecar.istio.io/excludeOutboundIPRanges":   false,
		"config.linkerd.io/skip-outbound-ports":              false,
		"prometheus.io/scrape":                               false,
		"example.com/team":                                   false,
		"liqo.io/offloading-conflict":                        false,
	} {
		if got := p.annotationAllowed(key); got != allowed {
			t.Errorf("annotation %s allowed = %v, want %v", key, got, allowed)
		}
	}
}

func TestPodPolicyFlags(t *testing.T) {
	var p PodPolicy
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	p.AddFlags(fs)
	err := fs.Parse([]string{"--pod-security-level=restricted", "--allowed-priority-classes=low,batch",
		"--allowed-runtime-classes=gvisor", "--allowed-pod-annotations=prometheus.io/*,example.com/team",
		"--allowed-volume-types=csi,ephemeral", "--reserved-taint-keys=example.com/dedicated"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Level != podsecurity.Restricted || len(p.PriorityClasses) != 2 || p.RuntimeClasses[0] != "gvisor" ||
		len(p.Annotations) != 2 || len(p.VolumeTypes) != 2 || p.ReservedTaints[0] != "example.com/dedicated" {
		t.Errorf("parsed %+v", p)
	}
	if err := p.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if err := fs.Parse([]string{"--pod-security-level=privileged"}); err == nil {
		t.Error("--pod-security-level=privileged was accepted")
	}

	for _, tt := range []struct {
		p    PodPolicy
		want string
	}{
		{PodPolicy{}, ""},
		{PodPolicy{Level: "privileged"}, "--pod-security-level"},
		{PodPolicy{PriorityClasses: []string{"system-node-critical"}}, "reserved for the cluster's own components"},
		{PodPolicy{PriorityClasses: []string{"Not_A_Name"}}, "no priority class name"},
		{PodPolicy{RuntimeClasses: []string{"Bad Name"}}, "no runtime class name"},
		{PodPolicy{Annotations: []string{"bad key!"}}, "neither an annotation key"},
		{PodPolicy{Annotations: []string{"Bad_Prefix/*"}}, "no annotation prefix"},
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
