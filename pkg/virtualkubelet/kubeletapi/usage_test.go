package kubeletapi

import (
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

func typesUID(s string) types.UID { return types.UID(s) }

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

// TestPodUsage: a provider's measure is accepted only when it is stamped
// in the past over a sane window and names the local pod's containers
// once each, with no negative quantity; each hostile measure is refused
// with the reason.
func TestPodUsage(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	local := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "uid-1"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}, {Name: "sidecar"}}},
	}
	measure := func(edit func(*metricsv1beta1.PodMetrics)) *metricsv1beta1.PodMetrics {
		m := &metricsv1beta1.PodMetrics{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns-twin", Name: "p"},
			Timestamp:  metav1.NewTime(now.Add(-time.Second)), Window: metav1.Duration{Duration: 15 * time.Second},
			Containers: []metricsv1beta1.ContainerMetrics{{Name: "app", Usage: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("10Mi")}}},
		}
		if edit != nil {
			edit(m)
		}
		return m
	}
	u, err := podUsage(local, measure(nil), now)
	if err != nil || u.UID != "uid-1" || u.Namespace != "ns" || len(u.Containers) != 1 ||
		u.Containers[0].NanoCores != 250e6 || u.Containers[0].MemoryBytes != 10<<20 || u.Window != 15*time.Second {
		t.Fatalf("a sane measure: %+v, %v", u, err)
	}
	for _, tc := range []struct {
		name, want string
		edit       func(*metricsv1beta1.PodMetrics)
	}{
		{"no timestamp", "no timestamp", func(m *metricsv1beta1.PodMetrics) { m.Timestamp = metav1.Time{} }},
		{"stamped in the future", "in the future", func(m *metricsv1beta1.PodMetrics) { m.Timestamp = metav1.NewTime(now.Add(time.Hour)) }},
		{"no window", "window", func(m *metricsv1beta1.PodMetrics) { m.Window.Duration = 0 }},
		{"a day's window", "window", func(m *metricsv1beta1.PodMetrics) { m.Window.Duration = 24 * time.Hour }},
		{"a container the pod has not", `"miner"`, func(m *metricsv1beta1.PodMetrics) { m.Containers[0].Name = "miner" }},
		{"a container twice", `"app"`, func(m *metricsv1beta1.PodMetrics) { m.Containers = append(m.Containers, m.Containers[0]) }},
		{"negative CPU", "negative", func(m *metricsv1beta1.PodMetrics) {
			m.Containers[0].Usage[corev1.ResourceCPU] = resource.MustParse("-1")
		}},
		{"negative memory", "negative", func(m *metricsv1beta1.PodMetrics) {
			m.Containers[0].Usage[corev1.ResourceMemory] = resource.MustParse("-1Ki")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := podUsage(local, measure(tc.edit), now); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want a refusal mentioning %q", err, tc.want)
			}
		})
	}
}
