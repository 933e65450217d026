package fuzz

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/controllermanager/shadowpod"
	"github.com/liqo-go/liqo/pkg/webhook/podpolicy"
)

// providerClasses are a provider's classes: the system ones, one of its
// own above a user class's range in disguise, a user class, and runtimes.
type providerClasses struct{}

func (providerClasses) Priority(_ context.Context, name string) (int32, bool, error) {
	v, ok := map[string]int32{"system-node-critical": 2000001000, "disguised": 1500000000, "batch": 1000}[name]
	return v, ok, nil
}

func (providerClasses) RuntimeClass(_ context.Context, name string) (bool, error) {
	return name == "nvidia" || name == "runc-privileged", nil
}

// FuzzPodPolicy: whatever a consumer's ShadowPod asks (spec and
// annotations, both the peer's), the default policy of a provider offering
// nvidia never admits a system priority class, a runtime class it does not
// offer, a volume type outside its list, an ephemeral claim of a given
// volume or of its virtual class; every refusal names its rule; the pod it
// would run carries no annotation or label that is neither carried nor
// inert (the same JSON is both); and the input is left as it was.
func FuzzPodPolicy(f *testing.F) {
	for _, s := range append(podSeeds,
		`{"priorityClassName":"disguised","runtimeClassName":"runc-privileged","containers":[{"name":"a","image":"b"}]}`,
		`{"priorityClassName":"batch","runtimeClassName":"nvidia","volumes":[{"name":"v","ephemeral":{"volumeClaimTemplate":{"spec":{"storageClassName":"liqo","volumeName":"x"}}}}],"containers":[{"name":"a","image":"b"}]}`,
		`{"tolerations":[{"key":"nvidia.com/gpu","operator":"Exists"},{"key":"CriticalAddonsOnly"}],"containers":[{"name":"a","image":"b","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}`,
		`{"resourceClaims":[{"name":"g","resourceClaimTemplateName":"t"}],"containers":[{"name":"a","image":"b","resources":{"claims":[{"name":"g"}]}}]}`) {
		f.Add([]byte(s), `{"prometheus.io/scrape":"true","sidecar.istio.io/inject":"true","k8s.v1.cni.cncf.io/networks":"x"}`)
	}
	policy := &podpolicy.PodPolicy{RuntimeClasses: []string{"nvidia"}, VirtualStorageClass: "liqo"}
	f.Fuzz(func(t *testing.T, data []byte, annotationsJSON string) {
		spec, ok := podSpec(t, data)
		if !ok {
			return
		}
		var annotations map[string]string
		if json.Unmarshal([]byte(annotationsJSON), &annotations) != nil {
			return
		}
		before := spec.DeepCopy()
		bad, err := policy.Vet(context.Background(), "work", annotations, annotations, &spec, providerClasses{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(&spec, before) {
			t.Fatal("the spec was modified")
		}
		for _, b := range bad {
			if !strings.Contains(b, "[rule: ") {
				t.Fatalf("a refusal names no rule: %q", b)
			}
		}
		if len(bad) > 0 {
			return
		}
		if c := spec.PriorityClassName; c == "disguised" || strings.HasPrefix(c, "system-") {
			t.Fatalf("admitted priority class %q", c)
		}
		if spec.Priority != nil {
			t.Fatal("admitted a priority value")
		}
		if c := spec.RuntimeClassName; c != nil && *c != "nvidia" {
			t.Fatalf("admitted runtime class %q", *c)
		}
		for _, v := range spec.Volumes {
			if v.HostPath != nil || v.NFS != nil || v.CSI != nil {
				t.Fatalf("admitted volume %+v", v)
			}
			if e := v.Ephemeral; e != nil && e.VolumeClaimTemplate != nil {
				s := e.VolumeClaimTemplate.Spec
				if s.VolumeName != "" || s.Selector != nil || s.DataSource != nil || s.DataSourceRef != nil ||
					s.StorageClassName != nil && *s.StorageClassName == "liqo" {
					t.Fatalf("admitted claim %+v", s)
				}
			}
		}
		for _, tol := range spec.Tolerations {
			if slices.Contains(podpolicy.DefaultDedicatedTaints, tol.Key) && !asks(&spec, corev1.ResourceName(tol.Key)) {
				t.Fatalf("admitted a toleration of dedicated taint %s without a request of it", tol.Key)
			}
		}
		if len(spec.ResourceClaims) > 0 || spec.Resources != nil && len(spec.Resources.Claims) > 0 {
			t.Fatal("admitted resource claims")
		}
		for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
			if len(c.Resources.Claims) > 0 {
				t.Fatalf("admitted the resource claims of container %q", c.Name)
			}
		}
		sp := &offv1beta1.ShadowPod{Spec: offv1beta1.ShadowPodSpec{Pod: spec}}
		sp.Name, sp.Namespace, sp.Annotations, sp.Labels = "p", "work", annotations, annotations
		pod := shadowpod.ForgePod(sp, shadowpod.PodOptions{MetadataOnly: policy.MetadataOnly}, nil)
		for k := range pod.Annotations {
			if policy.MetadataOnly(k) {
				t.Fatalf("the pod carries metadata-only annotation %s", k)
			}
			if prefix, _, found := strings.Cut(k, "/"); found && strings.Contains(prefix, ".") &&
				!strings.HasPrefix(k, "prometheus.io/") && !strings.Contains(prefix, "kubernetes.io") && prefix != "offloading.liqo.io" {
				t.Fatalf("the pod carries annotation %s, which some system of the provider may act upon", k)
			}
		}
		for k := range pod.Labels {
			if policy.MetadataOnly(k) {
				t.Fatalf("the pod carries metadata-only label %s", k)
			}
			// The labels the provider's systems may select the pod by:
			// the recommended and Helm ones, the consumer's workload
			// controllers', the reflection's origin and the ShadowPod
			// controller's own.
			if prefix, _, found := strings.Cut(k, "/"); found && strings.Contains(prefix, ".") && prefix != "app.kubernetes.io" &&
				prefix != "batch.kubernetes.io" && k != "helm.sh/chart" && k != "statefulset.kubernetes.io/pod-name" &&
				k != "apps.kubernetes.io/pod-index" && k != "liqo.io/origin-cluster-id" && k != shadowpod.ShadowPodLabel {
				t.Fatalf("the pod carries label %s, which some system of the provider may select it by", k)
			}
		}
	})
}

// asks tells whether the pod as a whole or one of its containers requests
// or limits a positive amount of name.
func asks(spec *corev1.PodSpec, name corev1.ResourceName) bool {
	lists := []corev1.ResourceList{}
	if spec.Resources != nil {
		lists = append(lists, spec.Resources.Requests, spec.Resources.Limits)
	}
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		lists = append(lists, c.Resources.Requests, c.Resources.Limits)
	}
	for _, l := range lists {
		if q, ok := l[name]; ok && q.Sign() > 0 {
			return true
		}
	}
	return false
}
