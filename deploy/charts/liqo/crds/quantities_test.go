package crds_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/deploy/charts/liqo/crds"
)

// wantInvalid fails unless err is the API server refusing an object with a
// message containing text.
func wantInvalid(t *testing.T, what string, err error, text string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), text) {
		t.Errorf("%s: err = %v, want a refusal containing %q", what, err, text)
	}
}

func quantities(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

// TestNegativeQuantities sends the API server, with no webhook, the
// negative quantities of issue 15 where the CRDs' rules can see them.
func TestNegativeQuantities(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := crds.Install(ctx, cluster.Config); err != nil {
		t.Fatal(err)
	}
	c := newClient(t)
	ns := "quantities"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}

	slice := func(name string, res corev1.ResourceList) *authv1beta1.ResourceSlice {
		return &authv1beta1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: authv1beta1.ResourceSliceSpec{Resources: res}}
	}
	wantInvalid(t, "a slice asking for -1000 CPUs", c.Create(ctx, slice("negative", quantities("cpu", "-1000", "pods", "10"))),
		"requested resources must not be negative")
	// An integer rather than a string: the schema takes both.
	out, err := kubectl(t, "apiVersion: authentication.liqo.io/v1beta1\nkind: ResourceSlice\nmetadata:\n  name: negative-int\n  namespace: "+ns+
		"\nspec:\n  resources:\n    cpu: -5\n", "create", "-f", "-")
	if err == nil || !strings.Contains(out, "requested resources must not be negative") {
		t.Errorf("a slice asking for -5 CPUs as an integer: %v\n%s", err, out)
	}
	out, err = kubectl(t, "apiVersion: authentication.liqo.io/v1beta1\nkind: ResourceSlice\nmetadata:\n  name: malformed\n  namespace: "+ns+
		"\nspec:\n  resources:\n    cpu: lots\n", "create", "-f", "-")
	if err == nil || !strings.Contains(out, "spec.resources.cpu") {
		t.Errorf("a slice asking for 'lots' of CPU: %v\n%s", err, out)
	}
	if err := c.Create(ctx, slice("fine", quantities("cpu", "4", "memory", "0", "pods", "10"))); err != nil {
		t.Errorf("a slice asking for what it may: %v", err)
	}

	quota := &offv1beta1.Quota{ObjectMeta: metav1.ObjectMeta{Name: "negative", Namespace: ns},
		Spec: offv1beta1.QuotaSpec{User: "liqo-consumer-rome", Resources: quantities("cpu", "4", "memory", "-1Gi")}}
	wantInvalid(t, "a Quota of -1Gi", c.Create(ctx, quota), "quota resources must not be negative")

	pod := func(name string) *offv1beta1.ShadowPod {
		return &offv1beta1.ShadowPod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: offv1beta1.ShadowPodSpec{Pod: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox",
				Resources: corev1.ResourceRequirements{Requests: quantities("cpu", "64")}}}}}}
	}
	podLevel := pod("pod-level")
	podLevel.Spec.Pod.Resources = &corev1.ResourceRequirements{Limits: quantities("cpu", "-63")}
	wantInvalid(t, "negative pod-level limits", c.Create(ctx, podLevel), "spec.pod.resources.limits must not be negative")
	podRequests := pod("pod-level-requests")
	podRequests.Spec.Pod.Resources = &corev1.ResourceRequirements{Requests: quantities("cpu", "-63")}
	wantInvalid(t, "negative pod-level requests", c.Create(ctx, podRequests), "spec.pod.resources.requests must not be negative")
	overhead := pod("overhead")
	overhead.Spec.Pod.Overhead = quantities("cpu", "-63")
	wantInvalid(t, "a negative overhead", c.Create(ctx, overhead), "spec.pod.overhead must not be negative")
}

// TestShadowPodResourcesImmutable updates a stored ShadowPod's resources
// with no webhook: the CRD's transition rules refuse it, and let through
// updates that leave the resources alone, even when a Go client rewrites
// a spec written by hand.
func TestShadowPodResourcesImmutable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := crds.Install(ctx, cluster.Config); err != nil {
		t.Fatal(err)
	}
	c := newClient(t)
	ns := "immutable"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	// As kubectl users write it: no resources on the sidecar, none at the
	// pod level.
	manifest := `apiVersion: offloading.liqo.io/v1beta1
kind: ShadowPod
metadata:
  name: web
  namespace: ` + ns + `
spec:
  pod:
    initContainers:
    - name: setup
      image: busybox
      resources:
        limits:
          memory: 64Mi
    containers:
    - name: app
      image: busybox
      resources:
        requests:
          cpu: "1"
        limits:
          cpu: "2"
    - name: sidecar
      image: busybox
`
	if out, err := kubectl(t, manifest, "create", "-f", "-"); err != nil {
		t.Fatalf("creating the ShadowPod: %v\n%s", err, out)
	}
	get := func() *offv1beta1.ShadowPod {
		t.Helper()
		sp := &offv1beta1.ShadowPod{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, sp); err != nil {
			t.Fatal(err)
		}
		return sp
	}
	// A Go client's read-modify-write adds empty resources to the sidecar.
	sp := get()
	sp.Labels = map[string]string{"touched": "true"}
	if err := c.Update(ctx, sp); err != nil {
		t.Fatalf("an update leaving the resources alone: %v", err)
	}

	tests := []struct {
		name   string
		change func(sp *offv1beta1.ShadowPod)
	}{
		{"a shrunk request", func(sp *offv1beta1.ShadowPod) {
			sp.Spec.Pod.Containers[0].Resources.Requests = quantities("cpu", "100m")
		}},
		{"a raised limit", func(sp *offv1beta1.ShadowPod) { sp.Spec.Pod.Containers[0].Resources.Limits = quantities("cpu", "8") }},
		{"resources given to a container without", func(sp *offv1beta1.ShadowPod) { sp.Spec.Pod.Containers[1].Resources.Requests = quantities("cpu", "1") }},
		{"an init container's limit dropped", func(sp *offv1beta1.ShadowPod) {
			sp.Spec.Pod.InitContainers[0].Resources = corev1.ResourceRequirements{}
		}},
		{"the init containers removed", func(sp *offv1beta1.ShadowPod) { sp.Spec.Pod.InitContainers = nil }},
		{"pod-level resources added", func(sp *offv1beta1.ShadowPod) {
			sp.Spec.Pod.Resources = &corev1.ResourceRequirements{Limits: quantities("cpu", "1")}
		}},
		{"an overhead added", func(sp *offv1beta1.ShadowPod) { sp.Spec.Pod.Overhead = quantities("cpu", "1") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := get()
			tt.change(sp)
			wantInvalid(t, tt.name, c.Update(ctx, sp), "immutable")
		})
	}
}

// TestContainerNegativeQuantities sends the API server, with no webhook,
// ShadowPods whose containers ask for negative cpu or memory, which would
// cancel another container's in the sum a quota bounds (issue 15: 64 CPUs
// admitted under a 1-CPU quota). Strings and integers are both quantities.
func TestContainerNegativeQuantities(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := crds.Install(ctx, cluster.Config); err != nil {
		t.Fatal(err)
	}
	c := newClient(t)
	ns := "container-quantities"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	shadowPod := func(name, containers string) string {
		return "apiVersion: offloading.liqo.io/v1beta1\nkind: ShadowPod\nmetadata:\n  name: " + name + "\n  namespace: " + ns +
			"\nspec:\n  pod:\n" + containers
	}
	const big = "    containers:\n    - name: big\n      image: busybox\n      resources:\n        requests:\n          cpu: \"64\"\n"
	tests := []struct {
		name, containers, want string
	}{
		{"a negative cpu request cancelling another container's",
			big + "    - name: small\n      image: busybox\n      resources:\n        requests:\n          cpu: \"-63\"\n",
			"spec.pod.containers: Invalid value: \"object\": a container's requests.cpu and requests.memory must not be negative"},
		{"a negative cpu request written as an integer",
			big + "    - name: small\n      image: busybox\n      resources:\n        requests:\n          cpu: -63\n",
			"spec.pod.containers: Invalid value: \"object\": a container's requests.cpu and requests.memory must not be negative"},
		{"a negative memory limit",
			big + "    - name: small\n      image: busybox\n      resources:\n        limits:\n          memory: -1Gi\n",
			"spec.pod.containers: Invalid value: \"object\": a container's limits.cpu and limits.memory must not be negative"},
		{"a negative cpu request in an init container",
			"    initContainers:\n    - name: setup\n      image: busybox\n      resources:\n        requests:\n          cpu: -2\n" + big,
			"spec.pod.initContainers: Invalid value: \"object\": an init container's requests.cpu and requests.memory must not be negative"},
		{"a negative memory limit in an init container",
			"    initContainers:\n    - name: setup\n      image: busybox\n      resources:\n        limits:\n          memory: \"-.5Gi\"\n" + big,
			"spec.pod.initContainers: Invalid value: \"object\": an init container's limits.cpu and limits.memory must not be negative"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := kubectl(t, shadowPod(fmt.Sprintf("negative-%d", i), tt.containers), "create", "-f", "-")
			if err == nil || !strings.Contains(out, tt.want) {
				t.Errorf("err = %v, want a refusal containing %q:\n%s", err, tt.want, out)
			}
		})
	}

	// What users write must still pass: integers, fractions, a leading
	// plus, exponents, no resources at all, other resources.
	fine := "    initContainers:\n    - name: setup\n      image: busybox\n      resources:\n        requests:\n          cpu: \".5\"\n        limits:\n          memory: \"1e9\"\n" +
		"    containers:\n    - name: app\n      image: busybox\n      resources:\n        requests:\n          cpu: 2\n          memory: \"+64Mi\"\n" +
		"          ephemeral-storage: 1Gi\n        limits:\n          cpu: \"2.5\"\n          memory: 0\n" +
		"    - name: sidecar\n      image: busybox\n"
	if out, err := kubectl(t, shadowPod("fine", fine), "create", "-f", "-"); err != nil {
		t.Errorf("a ShadowPod asking for what it may: %v\n%s", err, out)
	}
}
