package shadowpod

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/ipam"
)

func TestForgePod(t *testing.T) {
	spec := corev1.PodSpec{
		Containers:    []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"sleep", "inf"}}},
		RestartPolicy: corev1.RestartPolicyNever,
	}
	long := strings.Repeat("a", 100)
	tests := []struct {
		name            string
		sp              offv1beta1.ShadowPod
		wantLabels      map[string]string
		wantAnnotations map[string]string
	}{{
		name: "no labels nor annotations",
		sp: offv1beta1.ShadowPod{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1"},
			Spec:       offv1beta1.ShadowPodSpec{Pod: spec},
		},
		wantLabels: map[string]string{consts.ManagedByLabel: consts.ManagedByValue, ShadowPodLabel: "web"},
	}, {
		name: "labels and annotations copied",
		sp: offv1beta1.ShadowPod{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1",
				Labels:      map[string]string{"app": "web", "tier": "front"},
				Annotations: map[string]string{"note": "x"}},
			Spec: offv1beta1.ShadowPodSpec{Pod: spec},
		},
		wantLabels: map[string]string{"app": "web", "tier": "front",
			consts.ManagedByLabel: consts.ManagedByValue, ShadowPodLabel: "web"},
		wantAnnotations: map[string]string{"note": "x"},
	}, {
		name: "our labels win over the ShadowPod's",
		sp: offv1beta1.ShadowPod{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1",
				Labels: map[string]string{consts.ManagedByLabel: "helm", ShadowPodLabel: "other"}},
			Spec: offv1beta1.ShadowPodSpec{Pod: spec},
		},
		wantLabels: map[string]string{consts.ManagedByLabel: consts.ManagedByValue, ShadowPodLabel: "web"},
	}, {
		name: "a provider token asked for",
		sp: offv1beta1.ShadowPod{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1"},
			Spec: offv1beta1.ShadowPodSpec{Pod: func() corev1.PodSpec {
				s := *spec.DeepCopy()
				s.ServiceAccountName, s.AutomountServiceAccountToken = "default", ptr.To(true)
				return s
			}()},
		},
		wantLabels: map[string]string{consts.ManagedByLabel: consts.ManagedByValue, ShadowPodLabel: "web"},
	}, {
		name: "a name too long for a label value",
		sp: offv1beta1.ShadowPod{
			ObjectMeta: metav1.ObjectMeta{Name: long, Namespace: "ns", UID: "u1"},
			Spec:       offv1beta1.ShadowPodSpec{Pod: spec},
		},
		wantLabels: map[string]string{consts.ManagedByLabel: consts.ManagedByValue, ShadowPodLabel: LabelValue(long)},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orig := tt.sp.DeepCopy()
			pod := ForgePod(&tt.sp, PodOptions{}, nil)
			if pod.Name != tt.sp.Name || pod.Namespace != tt.sp.Namespace {
				t.Errorf("pod is %s/%s, want %s/%s", pod.Namespace, pod.Name, tt.sp.Namespace, tt.sp.Name)
			}
			if !equality.Semantic.DeepEqual(pod.Labels, tt.wantLabels) {
				t.Errorf("labels = %v, want %v", pod.Labels, tt.wantLabels)
			}
			if !equality.Semantic.DeepEqual(pod.Annotations, tt.wantAnnotations) {
				t.Errorf("annotations = %v, want %v", pod.Annotations, tt.wantAnnotations)
			}
			wantRef := []metav1.OwnerReference{{APIVersion: "offloading.liqo.io/v1beta1", Kind: "ShadowPod",
				Name: tt.sp.Name, UID: tt.sp.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
			if !equality.Semantic.DeepEqual(pod.OwnerReferences, wantRef) {
				t.Errorf("owner references = %+v, want %+v", pod.OwnerReferences, wantRef)
			}
			// The ShadowPod's spec, but never a token of the provider's,
			// and images pulled with the consumer's credentials.
			wantSpec := *tt.sp.Spec.Pod.DeepCopy()
			wantSpec.AutomountServiceAccountToken = ptr.To(false)
			wantSpec.Containers[0].ImagePullPolicy = corev1.PullAlways
			if !equality.Semantic.DeepEqual(pod.Spec, wantSpec) {
				t.Errorf("spec = %+v, want %+v", pod.Spec, wantSpec)
			}

			// The Pod shares nothing with the ShadowPod: changing it leaves
			// the ShadowPod (a cache object, in the controller) intact.
			pod.Labels["app"] = "changed"
			if pod.Annotations != nil {
				pod.Annotations["note"] = "changed"
			}
			pod.Spec.Containers[0].Command[0] = "changed"
			if !equality.Semantic.DeepEqual(&tt.sp, orig) {
				t.Errorf("ForgePod's result aliases the ShadowPod: %+v", tt.sp)
			}
		})
	}
}

func TestLabelValue(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // "" to only check validity
	}{
		{"short", "web-0", "web-0"},
		{"dots", "web.example", "web.example"},
		{"63 characters", strings.Repeat("a", 63), strings.Repeat("a", 63)},
		{"64 characters", strings.Repeat("a", 64), ""},
		{"253 characters", strings.Repeat("b", 253), ""},
		{"cut at a dash", strings.Repeat("a", 53) + "-" + strings.Repeat("c", 20), ""},
		{"cut at a dot", strings.Repeat("a", 53) + "." + strings.Repeat("c", 20), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := LabelValue(tt.in)
			if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
				t.Fatalf("LabelValue(%q) = %q, not a label value: %v", tt.in, got, errs)
			}
			if tt.want != "" && got != tt.want {
				t.Errorf("LabelValue(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if got != LabelValue(tt.in) {
				t.Errorf("LabelValue(%q) is not deterministic", tt.in)
			}
		})
	}
	if a, b := LabelValue(strings.Repeat("a", 70)+"x"), LabelValue(strings.Repeat("a", 70)+"y"); a == b {
		t.Errorf("two long names sharing their first 70 characters get the same value %q", a)
	}
}

// TestForgePodNodeSelector: the provider's node selector is added to the
// pod's and wins over a consumer's entry of the same key.
func TestForgePodNodeSelector(t *testing.T) {
	sp := &offv1beta1.ShadowPod{Spec: offv1beta1.ShadowPodSpec{Pod: corev1.PodSpec{NodeSelector: map[string]string{"zone": "a", "type": "kwok"}}}}
	pod := ForgePod(sp, PodOptions{NodeSelector: map[string]string{"type": "real"}}, nil)
	if got := pod.Spec.NodeSelector; len(got) != 2 || got["type"] != "real" || got["zone"] != "a" {
		t.Errorf("node selector %v, want zone=a and the provider's type=real", got)
	}
	if sp.Spec.Pod.NodeSelector["type"] != "kwok" {
		t.Error("the ShadowPod was changed")
	}
	if pod := ForgePod(&offv1beta1.ShadowPod{}, PodOptions{}, nil); pod.Spec.NodeSelector != nil {
		t.Errorf("no selector on either side gave %v", pod.Spec.NodeSelector)
	}
}

// TestForgePodHostAliases: a host alias at one of the consumer's addresses
// (its API server's twin) is translated into this cluster's view of it;
// the others stay, and the ShadowPod is not changed.
func TestForgePodHostAliases(t *testing.T) {
	m, err := ipam.NewMapping([]string{"10.244.0.0/16", "10.70.0.0/16"}, []string{"10.71.0.0/16", "10.72.0.0/16"})
	if err != nil {
		t.Fatal(err)
	}
	sp := &offv1beta1.ShadowPod{Spec: offv1beta1.ShadowPodSpec{Pod: corev1.PodSpec{HostAliases: []corev1.HostAlias{
		{IP: "10.70.0.1", Hostnames: []string{"kubernetes.default.svc"}}, {IP: "192.0.2.1", Hostnames: []string{"db"}}}}}}
	pod := ForgePod(sp, PodOptions{}, m.Translate)
	if got := pod.Spec.HostAliases; got[0].IP != "10.72.0.1" || got[1].IP != "192.0.2.1" {
		t.Errorf("host aliases %+v, want the API server's at 10.72.0.1 and db's unchanged", got)
	}
	if sp.Spec.Pod.HostAliases[0].IP != "10.70.0.1" {
		t.Error("the ShadowPod was changed")
	}
	if got := ForgePod(sp, PodOptions{}, nil).Spec.HostAliases[0].IP; got != "10.70.0.1" {
		t.Errorf("without the fabric the alias became %s", got)
	}
}
