package quota

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/ptr"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
)

func TestUsageOf(t *testing.T) {
	tests := []struct {
		name string
		spec corev1.PodSpec
		want Usage
	}{
		{"no resources count one pod and nothing else",
			corev1.PodSpec{Containers: []corev1.Container{webhooktest.Container(nil, nil)}},
			Usage{Requests: webhooktest.List("pods", "1"), Limits: webhooktest.List()}},
		{"containers add up",
			corev1.PodSpec{Containers: []corev1.Container{webhooktest.Container(webhooktest.List("cpu", "100m", "memory", "64Mi"), webhooktest.List("cpu", "200m", "memory", "64Mi")),
				webhooktest.Container(webhooktest.List("cpu", "300m"), webhooktest.List("cpu", "300m"))}},
			Usage{Requests: webhooktest.List("pods", "1", "cpu", "400m", "memory", "64Mi"), Limits: webhooktest.List("cpu", "500m", "memory", "64Mi")}},
		{"a missing limit counts the request",
			corev1.PodSpec{Containers: []corev1.Container{webhooktest.Container(webhooktest.List("cpu", "250m"), nil)}},
			Usage{Requests: webhooktest.List("pods", "1", "cpu", "250m"), Limits: webhooktest.List("cpu", "250m")}},
		{"a limit alone is also the request, as Kubernetes defaults it",
			corev1.PodSpec{Containers: []corev1.Container{webhooktest.Container(nil, webhooktest.List("memory", "1Gi"))}},
			Usage{Requests: webhooktest.List("pods", "1", "memory", "1Gi"), Limits: webhooktest.List("memory", "1Gi")}},
		{"the larger init container wins over the sum of the others",
			corev1.PodSpec{InitContainers: []corev1.Container{webhooktest.Container(webhooktest.List("cpu", "2"), nil)},
				Containers: []corev1.Container{webhooktest.Container(webhooktest.List("cpu", "500m"), nil)}},
			Usage{Requests: webhooktest.List("pods", "1", "cpu", "2"), Limits: webhooktest.List("cpu", "2")}},
		{"overhead is added",
			corev1.PodSpec{Overhead: webhooktest.List("cpu", "50m"), Containers: []corev1.Container{webhooktest.Container(webhooktest.List("cpu", "100m"), nil)}},
			Usage{Requests: webhooktest.List("pods", "1", "cpu", "150m"), Limits: webhooktest.List("cpu", "150m")}},
		{"pod-level limits alone are the requests too, as Kubernetes defaults them",
			corev1.PodSpec{Resources: &corev1.ResourceRequirements{Limits: webhooktest.List("cpu", "4", "memory", "1Gi")}, Containers: []corev1.Container{webhooktest.Container(nil, nil)}},
			Usage{Requests: webhooktest.List("pods", "1", "cpu", "4", "memory", "1Gi"), Limits: webhooktest.List("cpu", "4", "memory", "1Gi")}},
		{"pod-level limits with container requests: the containers' sum is the request",
			corev1.PodSpec{Resources: &corev1.ResourceRequirements{Limits: webhooktest.List("cpu", "4")},
				Containers: []corev1.Container{webhooktest.Container(webhooktest.List("cpu", "1"), nil), webhooktest.Container(webhooktest.List("cpu", "500m"), nil)}},
			Usage{Requests: webhooktest.List("pods", "1", "cpu", "1500m"), Limits: webhooktest.List("cpu", "4")}},
		{"pod-level requests win over the containers'",
			corev1.PodSpec{Resources: &corev1.ResourceRequirements{Requests: webhooktest.List("memory", "2Gi")},
				Containers: []corev1.Container{webhooktest.Container(webhooktest.List("cpu", "1", "memory", "1Gi"), nil)}},
			// A limit is never counted below the request, as for containers.
			Usage{Requests: webhooktest.List("pods", "1", "cpu", "1", "memory", "2Gi"), Limits: webhooktest.List("cpu", "1", "memory", "2Gi")}},
		{"pod-level requests below the containers' count the containers'",
			// Kubernetes refuses such a pod, or, without its PodLevelResources
			// feature, drops the pod-level field and runs the containers'.
			corev1.PodSpec{Resources: &corev1.ResourceRequirements{Requests: webhooktest.List("cpu", "100m")},
				Containers: []corev1.Container{webhooktest.Container(webhooktest.List("cpu", "2"), nil)}},
			Usage{Requests: webhooktest.List("pods", "1", "cpu", "2"), Limits: webhooktest.List("cpu", "2")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := UsageOf(&tt.spec); !got.Equal(tt.want) {
				t.Errorf("UsageOf = %v / %v, want %v / %v", got.Requests, got.Limits, tt.want.Requests, tt.want.Limits)
			}
		})
	}
}

func TestLimitCheck(t *testing.T) {
	quota := webhooktest.List("cpu", "1", "memory", "1Gi", "pods", "3")
	pod := func(cpuReq, cpuLim string) Usage {
		var lim corev1.ResourceList
		if cpuLim != "" {
			lim = webhooktest.List("cpu", cpuLim)
		}
		return UsageOf(&corev1.PodSpec{Containers: []corev1.Container{webhooktest.Container(webhooktest.List("cpu", cpuReq), lim)}})
	}
	tests := []struct {
		name        string
		enforcement offv1beta1.LimitsEnforcement
		used, add   Usage
		exceeded    string // the resource named in the error; "" to admit
	}{
		{"within Soft", offv1beta1.SoftLimitsEnforcement, pod("500m", ""), pod("500m", ""), ""},
		{"requests over Soft", offv1beta1.SoftLimitsEnforcement, pod("600m", ""), pod("500m", ""), "cpu"},
		{"Soft ignores limits", offv1beta1.SoftLimitsEnforcement, pod("100m", "900m"), pod("100m", "900m"), ""},
		{"Hard bounds limits", offv1beta1.HardLimitsEnforcement, pod("100m", "900m"), pod("100m", "900m"), "limits.cpu"},
		{"Hard with requests only counts them as limits", offv1beta1.HardLimitsEnforcement, pod("500m", ""), pod("500m", ""), ""},
		{"None admits anything", offv1beta1.NoLimitsEnforcement, pod("1", ""), pod("5", ""), ""},
		{"the pods count is bounded", offv1beta1.SoftLimitsEnforcement,
			Usage{Requests: webhooktest.List("pods", "3")}, UsageOf(&corev1.PodSpec{Containers: []corev1.Container{webhooktest.Container(nil, nil)}}), "pods"},
		{"a pod without resources fits Hard", offv1beta1.HardLimitsEnforcement,
			Usage{Requests: webhooktest.List("pods", "2", "cpu", "1")}, UsageOf(&corev1.PodSpec{Containers: []corev1.Container{webhooktest.Container(nil, nil)}}), ""},
		{"a shrunk quota still admits what it does not bound", offv1beta1.SoftLimitsEnforcement,
			Usage{Requests: webhooktest.List("pods", "1", "memory", "2Gi")}, pod("100m", ""), ""},
		{"a resource the quota does not list is bounded at zero", offv1beta1.SoftLimitsEnforcement,
			Usage{}, Usage{Requests: webhooktest.List("pods", "1", "nvidia.com/gpu", "4")}, "nvidia.com/gpu"},
		{"hugepages not granted", offv1beta1.HardLimitsEnforcement,
			Usage{}, UsageOf(&corev1.PodSpec{Containers: []corev1.Container{webhooktest.Container(nil, webhooktest.List("hugepages-2Mi", "4Mi", "memory", "64Mi"))}}), "hugepages-2Mi"},
		{"a limit of a resource not granted (Hard)", offv1beta1.HardLimitsEnforcement,
			Usage{}, Usage{Requests: webhooktest.List("pods", "1"), Limits: webhooktest.List("ephemeral-storage", "1Gi")}, "limits.ephemeral-storage"},
		{"None leaves even ungranted resources alone", offv1beta1.NoLimitsEnforcement,
			Usage{}, Usage{Requests: webhooktest.List("pods", "1", "nvidia.com/gpu", "4")}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Limit{Resources: quota, Enforcement: tt.enforcement}.Check(tt.used, tt.add)
			var exceeded *ExceededError
			switch {
			case tt.exceeded == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.exceeded != "" && !errors.As(err, &exceeded):
				t.Errorf("err = %v, want quota usage exceeded on %s", err, tt.exceeded)
			case tt.exceeded != "" && exceeded.Resource != tt.exceeded:
				t.Errorf("exceeded %s, want %s (%v)", exceeded.Resource, tt.exceeded, err)
			}
		})
	}
}

func TestExceededErrorText(t *testing.T) {
	err := Limit{Resources: webhooktest.List("cpu", "1"), Enforcement: offv1beta1.SoftLimitsEnforcement}.
		Check(Usage{Requests: webhooktest.List("cpu", "800m")}, Usage{Requests: webhooktest.List("cpu", "300m")})
	if want := "quota usage exceeded: cpu requested 300m, used 800m of 1"; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
}

func TestLimitOf(t *testing.T) {
	q := func(name string, e offv1beta1.LimitsEnforcement, cordoned bool, res corev1.ResourceList) offv1beta1.Quota {
		return offv1beta1.Quota{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: offv1beta1.QuotaSpec{User: "u", LimitsEnforcement: e, Resources: res, Cordoned: ptr.To(cordoned)}}
	}
	got := LimitOf([]offv1beta1.Quota{q("a", offv1beta1.SoftLimitsEnforcement, false, webhooktest.List("cpu", "1")),
		q("b", offv1beta1.SoftLimitsEnforcement, false, webhooktest.List("cpu", "2", "pods", "5"))})
	if !equalAmounts(got.Resources, webhooktest.List("cpu", "3", "pods", "5")) || got.Enforcement != offv1beta1.SoftLimitsEnforcement || !got.Open || got.Cordoned != nil {
		t.Errorf("LimitOf = %+v, want cpu 3, pods 5, Soft, open, none cordoned", got)
	}
	// A cordoned slice's grant, and its enforcement, are left out.
	got = LimitOf([]offv1beta1.Quota{q("a", offv1beta1.SoftLimitsEnforcement, false, webhooktest.List("cpu", "1")),
		q("c", offv1beta1.HardLimitsEnforcement, true, webhooktest.List("cpu", "4")), q("b", offv1beta1.NoLimitsEnforcement, true, webhooktest.List("cpu", "2", "pods", "5"))})
	if !equalAmounts(got.Resources, webhooktest.List("cpu", "1")) || got.Enforcement != offv1beta1.SoftLimitsEnforcement || !got.Open ||
		strings.Join(got.Cordoned, ",") != "b,c" {
		t.Errorf("LimitOf with two cordoned = %+v, want cpu 1, Soft, open, cordoned b,c", got)
	}
	if got := LimitOf([]offv1beta1.Quota{q("a", "", true, webhooktest.List("cpu", "1"))}); got.Open || strings.Join(got.Cordoned, ",") != "a" {
		t.Errorf("LimitOf of one cordoned = %+v, want not open, cordoned a", got)
	}
	if got := LimitOf([]offv1beta1.Quota{q("a", "", false, nil)}); got.Enforcement != offv1beta1.HardLimitsEnforcement || got.Cordoned != nil || !got.Open {
		t.Errorf("an unset enforcement = %+v, want Hard, not cordoned", got)
	}
}

func TestUsedOf(t *testing.T) {
	got := usedOf(Usage{Requests: webhooktest.List("cpu", "300m", "pods", "2", "nvidia.com/gpu", "1")}, webhooktest.List("cpu", "1", "memory", "1Gi", "pods", "10"))
	if want := webhooktest.List("cpu", "300m", "memory", "0", "pods", "2"); !SameAmounts(got, want) {
		t.Errorf("usedOf = %v, want %v", got, want)
	}
	if SameAmounts(webhooktest.List("cpu", "1"), webhooktest.List("cpu", "1", "memory", "0")) {
		t.Errorf("a status lacking a resource compares equal to one listing it")
	}
	if !SameAmounts(webhooktest.List("cpu", "1"), webhooktest.List("cpu", "1000m")) {
		t.Errorf("1 and 1000m compare different")
	}
}

// TestUsageOfMatchesAPIServer creates real pods of several resource shapes
// and checks that UsageOf counts, for the spec as a consumer sends it, what
// the scheduler reserves for the pod the API server stores: the ShadowPod's
// spec is not defaulted, the real pod is.
func TestUsageOfMatchesAPIServer(t *testing.T) {
	ctx := context.Background()
	ns := "usage"
	if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	app := func(requests, limits corev1.ResourceList) corev1.Container {
		c := webhooktest.Container(requests, limits)
		c.Name = "app"
		return c
	}
	tests := []struct {
		name string
		spec corev1.PodSpec
	}{
		{"container limits only", corev1.PodSpec{Containers: []corev1.Container{app(nil, webhooktest.List("cpu", "500m", "memory", "64Mi"))}}},
		{"pod-level limits only", corev1.PodSpec{Resources: &corev1.ResourceRequirements{Limits: webhooktest.List("cpu", "2", "memory", "1Gi")},
			Containers: []corev1.Container{app(nil, nil)}}},
		{"pod-level limits and container requests", corev1.PodSpec{Resources: &corev1.ResourceRequirements{Limits: webhooktest.List("cpu", "2")},
			Containers: []corev1.Container{app(webhooktest.List("cpu", "500m"), nil), {Name: "b", Image: "busybox",
				Resources: corev1.ResourceRequirements{Requests: webhooktest.List("cpu", "250m")}}}}},
		{"pod-level requests and limits", corev1.PodSpec{Resources: &corev1.ResourceRequirements{Requests: webhooktest.List("cpu", "1"), Limits: webhooktest.List("cpu", "2")},
			Containers: []corev1.Container{app(webhooktest.List("cpu", "500m"), nil)}}},
		{"pod-level memory limit and container cpu requests", corev1.PodSpec{Resources: &corev1.ResourceRequirements{Limits: webhooktest.List("memory", "1Gi")},
			Containers: []corev1.Container{app(webhooktest.List("cpu", "1"), nil)}}},
		{"init container limits only", corev1.PodSpec{InitContainers: []corev1.Container{{Name: "setup", Image: "busybox",
			Resources: corev1.ResourceRequirements{Limits: webhooktest.List("cpu", "3")}}}, Containers: []corev1.Container{app(webhooktest.List("cpu", "1"), nil)}}},
		{"sidecar limits only", corev1.PodSpec{InitContainers: []corev1.Container{{Name: "proxy", Image: "busybox",
			RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways), Resources: corev1.ResourceRequirements{Limits: webhooktest.List("cpu", "1")}}},
			Containers: []corev1.Container{app(webhooktest.List("cpu", "1"), nil)}}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("shape-%d", i), Namespace: ns}, Spec: *tt.spec.DeepCopy()}
			if err := cl.Create(ctx, pod); err != nil {
				t.Fatalf("creating the pod: %v", err)
			}
			want := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
			got := UsageOf(&tt.spec).Requests
			delete(got, corev1.ResourcePods)
			if !equalAmounts(got, want) {
				t.Errorf("UsageOf counts %v; the scheduler reserves %v for the stored pod (spec.resources %+v)", got, want, pod.Spec.Resources)
			}
		})
	}
}
