package merge

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// hello is the export of a ClusterSetIP Service on TCP and UDP port 42,
// by cluster, created minutes after t0.
func hello(cluster string, minutes int) Export {
	return Export{
		Cluster: cluster, Created: t0.Add(time.Duration(minutes) * time.Minute), Type: mcsv1beta1.ClusterSetIP,
		Ports: []mcsv1beta1.ServicePort{
			{Name: "tcp", Protocol: corev1.ProtocolTCP, Port: 42},
			{Name: "udp", Protocol: corev1.ProtocolUDP, Port: 42},
		},
		SessionAffinity: corev1.ServiceAffinityNone, IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
	}
}

func TestMerge(t *testing.T) {
	tests := []struct {
		name      string
		exports   []Export
		edit      func(e *Export) // applied to the second export
		conflicts string
		check     func(t *testing.T, r Result)
	}{
		{name: "one export", exports: []Export{hello("a", 0)}, conflicts: "NoConflicts"},
		{name: "agreeing exports", exports: []Export{hello("b", 1), hello("a", 0)}, conflicts: "NoConflicts",
			check: func(t *testing.T, r Result) {
				if !slices.Equal(r.Clusters, []string{"a", "b"}) || len(r.Spec.Ports) != 2 {
					t.Errorf("clusters %v ports %v", r.Clusters, r.Spec.Ports)
				}
			}},
		{name: "headless against ClusterSetIP: the oldest's type", exports: []Export{hello("a", 0), hello("b", 1)},
			edit: func(e *Export) { e.Type = mcsv1beta1.Headless }, conflicts: "TypeConflict",
			check: func(t *testing.T, r Result) {
				if r.Spec.Type != mcsv1beta1.ClusterSetIP {
					t.Errorf("type %s, want the oldest's", r.Spec.Type)
				}
			}},
		{name: "the oldest wins even when listed last", exports: []Export{hello("b", 5), hello("a", 3)},
			edit: func(e *Export) { e.Type = mcsv1beta1.Headless }, conflicts: "TypeConflict",
			check: func(t *testing.T, r Result) {
				// The second listed (a, edited to Headless) is the oldest.
				if r.Spec.Type != mcsv1beta1.Headless || !strings.Contains(r.Message, "cluster a, which wins") {
					t.Errorf("type %s message %q, want a's", r.Spec.Type, r.Message)
				}
			}},
		{name: "same port name, another number: the oldest's port only", exports: []Export{hello("a", 0), hello("b", 1)},
			edit: func(e *Export) {
				e.Ports = []mcsv1beta1.ServicePort{{Name: "tcp", Protocol: corev1.ProtocolTCP, Port: 43}}
			}, conflicts: "PortConflict",
			check: func(t *testing.T, r Result) {
				if len(r.Spec.Ports) != 2 || r.Spec.Ports[0].Port != 42 {
					t.Errorf("ports %v, want a's", r.Spec.Ports)
				}
			}},
		{name: "another port: the union, and a conflict", exports: []Export{hello("a", 0), hello("b", 1)},
			edit: func(e *Export) {
				e.Ports = append(e.Ports[:1:1], mcsv1beta1.ServicePort{Name: "stcp", Protocol: corev1.ProtocolSCTP, Port: 142})
			}, conflicts: "PortConflict",
			check: func(t *testing.T, r Result) {
				if len(r.Spec.Ports) != 3 || r.Spec.Ports[2].Name != "stcp" {
					t.Errorf("ports %v, want the union", r.Spec.Ports)
				}
			}},
		{name: "one number and protocol under two names: the oldest's", exports: []Export{hello("a", 0), hello("b", 1)},
			edit: func(e *Export) { e.Ports[0].Name = "web" }, conflicts: "PortConflict",
			check: func(t *testing.T, r Result) {
				if len(r.Spec.Ports) != 2 || r.Spec.Ports[0].Name != "tcp" {
					t.Errorf("ports %v", r.Spec.Ports)
				}
			}},
		{name: "ports in another order agree", exports: []Export{hello("a", 0), hello("b", 1)},
			edit: func(e *Export) { slices.Reverse(e.Ports) }, conflicts: "NoConflicts"},
		{name: "app protocol", exports: []Export{hello("a", 0), hello("b", 1)},
			edit: func(e *Export) { e.Ports[0].AppProtocol = ptr.To("http") }, conflicts: "PortConflict"},
		{name: "session affinity and labels, in the KEP's order", exports: []Export{hello("a", 0), hello("b", 1)},
			edit: func(e *Export) {
				e.Labels = map[string]string{"x": "y"}
				e.SessionAffinity = corev1.ServiceAffinityClientIP
				e.SessionAffinityConfig = &corev1.SessionAffinityConfig{ClientIP: &corev1.ClientIPConfig{TimeoutSeconds: ptr.To[int32](10)}}
			}, conflicts: "SessionAffinityConflict,SessionAffinityConfigConflict,LabelsConflict",
			check: func(t *testing.T, r Result) {
				if len(r.Labels) != 0 || r.Spec.SessionAffinity != corev1.ServiceAffinityNone {
					t.Errorf("labels %v affinity %s, want the oldest's", r.Labels, r.Spec.SessionAffinity)
				}
			}},
		{name: "annotations", exports: []Export{hello("a", 0), hello("b", 1)},
			edit: func(e *Export) { e.Annotations = map[string]string{"x": "y"} }, conflicts: "AnnotationsConflict"},
		{name: "unset internal traffic policy is Cluster", exports: []Export{hello("a", 0), hello("b", 1)},
			edit: func(e *Export) { e.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyCluster) }, conflicts: "NoConflicts"},
		{name: "internal traffic policy", exports: []Export{hello("a", 0), hello("b", 1)},
			edit: func(e *Export) { e.InternalTrafficPolicy = ptr.To(corev1.ServiceInternalTrafficPolicyLocal) }, conflicts: "InternalTrafficPolicyConflict"},
		{name: "traffic distribution", exports: []Export{hello("a", 0), hello("b", 1)},
			edit: func(e *Export) { e.TrafficDistribution = ptr.To("PreferClose") }, conflicts: "TrafficDistributionConflict"},
		{name: "IP families", exports: []Export{hello("a", 0), hello("b", 1)},
			edit: func(e *Export) { e.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol} }, conflicts: "IPFamilyConflict",
			check: func(t *testing.T, r Result) {
				if !slices.Equal(r.Spec.IPFamilies, []corev1.IPFamily{corev1.IPv4Protocol}) {
					t.Errorf("IP families %v", r.Spec.IPFamilies)
				}
			}},
		{name: "a tie goes to the lower cluster ID", exports: []Export{hello("b", 0), hello("a", 0)},
			edit: func(e *Export) { e.Type = mcsv1beta1.Headless }, conflicts: "TypeConflict",
			check: func(t *testing.T, r Result) {
				if r.Spec.Type != mcsv1beta1.Headless {
					t.Errorf("type %s, want a's", r.Spec.Type)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.edit != nil {
				tt.edit(&tt.exports[1])
			}
			before := slices.Clone(tt.exports)
			r := Merge(tt.exports)
			if got := r.Reason(); got != tt.conflicts {
				t.Errorf("reason %q, want %q (message %q)", got, tt.conflicts, r.Message)
			}
			if tt.conflicts != "NoConflicts" && !strings.Contains(r.Message, "disagree") {
				t.Errorf("message %q does not say who disagrees", r.Message)
			}
			if before[0].Cluster != tt.exports[0].Cluster {
				t.Error("Merge reordered its input")
			}
			if tt.check != nil {
				tt.check(t, r)
			}
		})
	}
}

func TestMergeNone(t *testing.T) {
	if r := Merge(nil); len(r.Clusters) != 0 || r.Reason() != "NoConflicts" {
		t.Errorf("%+v", r)
	}
}

func TestFromService(t *testing.T) {
	se := &mcsv1beta1.ServiceExport{
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(t0)},
		Spec:       mcsv1beta1.ServiceExportSpec{ExportedLabels: map[string]string{"l": "1"}},
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"own": "label"}},
		Spec:       corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Name: "p", Port: 80}}},
	}
	e := FromService("a", se, svc)
	if e.Type != mcsv1beta1.Headless || e.Ports[0].Protocol != corev1.ProtocolTCP || e.SessionAffinity != corev1.ServiceAffinityNone ||
		!e.Created.Equal(t0) || e.Labels["l"] != "1" || e.Labels["own"] != "" {
		t.Errorf("%+v", e)
	}
	if Exportable(&corev1.Service{Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName}}) == "" || Exportable(svc) != "" {
		t.Error("only ExternalName Services are refused")
	}
}
