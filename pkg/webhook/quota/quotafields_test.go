package quota

import (
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
)

// TestQuotaFieldsKeepUsage: for random pod specs (init containers,
// sidecars, pod-level resources, overhead, and the fields a quota does not
// read), UsageOf counts the same for QuotaFields' part of the spec as for
// the whole, and that part holds nothing else.
func TestQuotaFieldsKeepUsage(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	names := []string{"cpu", "memory", "ephemeral-storage", "hugepages-2Mi", "example.com/gpu"}
	amounts := []string{"100m", "1", "250m", "64Mi", "1Gi", "2"}
	randomList := func(from []string) corev1.ResourceList {
		if rng.IntN(3) == 0 {
			return nil
		}
		kv := []string{}
		for _, n := range from {
			if rng.IntN(2) == 0 {
				kv = append(kv, n, amounts[rng.IntN(len(amounts))])
			}
		}
		return webhooktest.List(kv...)
	}
	randomContainers := func(n int, init bool) []corev1.Container {
		var cs []corev1.Container
		for i := range n {
			c := webhooktest.Container(randomList(names), randomList(names))
			c.Name = fmt.Sprintf("c%d", i)
			c.Env = []corev1.EnvVar{{Name: "A", Value: "b"}}
			c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
			if init && rng.IntN(2) == 0 {
				c.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
			}
			cs = append(cs, c)
		}
		return cs
	}
	for i := range 2000 {
		spec := corev1.PodSpec{
			InitContainers: randomContainers(rng.IntN(3), true),
			Containers:     randomContainers(1+rng.IntN(3), false),
			Overhead:       randomList(names[:2]),
			NodeSelector:   map[string]string{"disk": "ssd"},
			Volumes:        []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		}
		if rng.IntN(2) == 0 {
			spec.Resources = &corev1.ResourceRequirements{Requests: randomList(names[:2]), Limits: randomList(names[:2])}
		}
		kept := QuotaFields(spec.DeepCopy())
		if got, want := UsageOf(&kept), UsageOf(&spec); !got.Equal(want) {
			t.Fatalf("spec %d: UsageOf(QuotaFields) = %v / %v, UsageOf = %v / %v\nspec: %+v",
				i, got.Requests, got.Limits, want.Requests, want.Limits, spec)
		}
		rest := kept.DeepCopy()
		rest.Overhead, rest.Resources = nil, nil
		for _, cs := range [][]corev1.Container{rest.InitContainers, rest.Containers} {
			for j := range cs {
				cs[j].Resources, cs[j].RestartPolicy = corev1.ResourceRequirements{}, nil
			}
		}
		bare := corev1.PodSpec{InitContainers: make([]corev1.Container, len(spec.InitContainers)), Containers: make([]corev1.Container, len(spec.Containers))}
		if !equality.Semantic.DeepEqual(*rest, bare) {
			t.Fatalf("spec %d: QuotaFields kept more than resources: %+v", i, kept)
		}
	}
}
