package shadowpod_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/liqo-go/liqo/apis"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/webhook/budget"
	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
	"github.com/liqo-go/liqo/pkg/webhook/podpolicy"
	"github.com/liqo-go/liqo/pkg/webhook/quota"
	"github.com/liqo-go/liqo/pkg/webhook/shadowpod"
)

// directValidator is the ShadowPod validator called without the API server
// and with a ledger of its own: it receives what a hostile client could
// send, even what the CRD's schema would stop first, and the tests read its
// answer rather than the API server's.
func directValidator(policy podpolicy.PodPolicy) admission.Handler {
	return shadowpod.NewValidator(webhooktest.Cl, webhooktest.Cl, admission.NewDecoder(apis.NewScheme()), &quota.Ledger[types.NamespacedName]{}, func() bool { return true },
		policy, budget.New(budget.DefaultObjectBudget()))
}

// withContainers is a ShadowPod of consumer id running cs.
func withContainers(id, name string, cs ...corev1.Container) *offv1beta1.ShadowPod {
	sp := webhooktest.ShadowPod(name, webhooktest.Twin(id), id, "", "")
	sp.Spec.Pod.Containers = cs
	return sp
}

func named(name string, c corev1.Container) corev1.Container {
	c.Name = name
	return c
}

// TestShadowPodRefusesNegativeResources sends the webhook quantities no pod
// may ask for. A negative request in one container would cancel another's
// in the sum the quota bounds: the probe of issue 15 ran 64 CPUs under a
// 1-CPU quota that way.
func TestShadowPodRefusesNegativeResources(t *testing.T) {
	ctx := context.Background()
	webhooktest.Consumer(t, "mu", offv1beta1.HardLimitsEnforcement, webhooktest.List("cpu", "1", "memory", "1Gi", "pods", "10", "nvidia.com/gpu", "2"))
	v := directValidator(podpolicy.PodPolicy{})
	big := named("app", webhooktest.Container(webhooktest.List("cpu", "64"), nil))
	tests := []struct {
		name      string
		sp        *offv1beta1.ShadowPod
		edit      func([]byte) []byte
		fragments []string
	}{
		{"a negative request cancelling another container's",
			withContainers("mu", "offset", big, named("b", webhooktest.Container(webhooktest.List("cpu", "-63500m"), nil))),
			nil, []string{`container "b"`, "requests.cpu", "must not be negative", "-63500m"}},
		{"a negative limit in an init container",
			func() *offv1beta1.ShadowPod {
				sp := withContainers("mu", "init", named("app", webhooktest.Container(nil, nil)))
				sp.Spec.Pod.InitContainers = []corev1.Container{named("setup", webhooktest.Container(nil, webhooktest.List("memory", "-1Gi")))}
				return sp
			}(), nil, []string{`init container "setup"`, "limits.memory", "must not be negative"}},
		{"a negative extended resource",
			withContainers("mu", "gpu", named("app", webhooktest.Container(webhooktest.List("nvidia.com/gpu", "-1"), webhooktest.List("nvidia.com/gpu", "-1")))),
			nil, []string{`container "app"`, "requests.nvidia.com/gpu", "must not be negative"}},
		{"a negative ephemeral-storage limit",
			withContainers("mu", "disk", named("app", webhooktest.Container(nil, webhooktest.List("ephemeral-storage", "-10Gi")))),
			nil, []string{`container "app"`, "limits.ephemeral-storage", "must not be negative"}},
		{"negative pod-level limits",
			func() *offv1beta1.ShadowPod {
				sp := withContainers("mu", "podlevel", big)
				sp.Spec.Pod.Resources = &corev1.ResourceRequirements{Limits: webhooktest.List("cpu", "-63")}
				return sp
			}(), nil, []string{"spec.pod.resources", "limits.cpu", "must not be negative"}},
		{"a negative overhead",
			func() *offv1beta1.ShadowPod {
				sp := withContainers("mu", "overhead", big)
				sp.Spec.Pod.Overhead = webhooktest.List("cpu", "-63")
				return sp
			}(), nil, []string{"spec.pod.overhead", "cpu", "must not be negative"}},
		{"a fraction of an extended resource",
			withContainers("mu", "half", named("app", webhooktest.Container(webhooktest.List("nvidia.com/gpu", "500m"), webhooktest.List("nvidia.com/gpu", "500m")))),
			nil, []string{`container "app"`, "requests.nvidia.com/gpu", "whole number"}},
		{"a malformed quantity",
			withContainers("mu", "malformed", named("app", webhooktest.Container(webhooktest.List("cpu", "1"), nil))),
			func(raw []byte) []byte { return bytes.Replace(raw, []byte(`"cpu":"1"`), []byte(`"cpu":"lots"`), 1) },
			[]string{`container "app"`, "requests.cpu", `"lots"`, "not a quantity"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			webhooktest.WantRefused(t, tt.name, v.Handle(ctx, webhooktest.ShadowPodReview(t, "mu", tt.sp, nil, false, tt.edit)), tt.fragments...)
		})
	}
	// What the quota allows still passes.
	ok := withContainers("mu", "fits", named("app", webhooktest.Container(webhooktest.List("cpu", "500m", "nvidia.com/gpu", "1"), webhooktest.List("nvidia.com/gpu", "1"))))
	if resp := v.Handle(ctx, webhooktest.ShadowPodReview(t, "mu", ok, nil, false, nil)); !resp.Allowed {
		t.Errorf("a ShadowPod within quota refused: %v", resp.Result)
	}
}

// TestShadowPodNegativeRequestThroughAPIServer is the probe of issue 15 as
// a consumer sends it. Negative cpu and memory in a container are refused
// by the CRD's rules before the webhook is asked; the other resources of a
// container no CEL rule can reach within the API server's cost budget, so
// the webhook must refuse those.
func TestShadowPodNegativeRequestThroughAPIServer(t *testing.T) {
	ctx := context.Background()
	webhooktest.Consumer(t, "nu", offv1beta1.HardLimitsEnforcement, webhooktest.List("cpu", "1", "memory", "1Gi", "pods", "10", "ephemeral-storage", "1Gi"))
	probe := withContainers("nu", "probe", named("app", webhooktest.Container(webhooktest.List("cpu", "64"), nil)),
		named("b", webhooktest.Container(webhooktest.List("cpu", "-63500m"), nil)))
	err := webhooktest.Cl.Create(ctx, probe)
	if err == nil || !strings.Contains(err.Error(), "spec.pod.containers") || !strings.Contains(err.Error(), "requests.cpu and requests.memory must not be negative") {
		t.Errorf("64 CPUs offset by a negative request: err = %v, want the CRD's refusal", err)
	}
	disk := withContainers("nu", "disk", named("app", webhooktest.Container(webhooktest.List("ephemeral-storage", "64Gi"), nil)),
		named("b", webhooktest.Container(webhooktest.List("ephemeral-storage", "-63Gi"), nil)))
	webhooktest.WantDenied(t, "64Gi of ephemeral storage offset by a negative request", webhooktest.Cl.Create(ctx, disk),
		`container "b": requests.ephemeral-storage must not be negative`)
}

// TestShadowPodResourcesImmutable sends the webhook updates of a stored
// ShadowPod's resources: the real pod keeps those it was created with, so
// the quota must count them until the ShadowPod is gone.
func TestShadowPodResourcesImmutable(t *testing.T) {
	ctx := context.Background()
	webhooktest.Consumer(t, "xi", offv1beta1.SoftLimitsEnforcement, webhooktest.List("cpu", "2", "memory", "1Gi", "pods", "10"))
	v := directValidator(podpolicy.PodPolicy{})
	old := withContainers("xi", "web", named("app", webhooktest.Container(webhooktest.List("cpu", "1"), webhooktest.List("cpu", "1"))))
	old.Spec.Pod.InitContainers = []corev1.Container{named("setup", webhooktest.Container(webhooktest.List("cpu", "1"), nil))}
	change := func(f func(sp *offv1beta1.ShadowPod)) *offv1beta1.ShadowPod {
		sp := old.DeepCopy()
		f(sp)
		return sp
	}
	tests := []struct {
		name      string
		sp        *offv1beta1.ShadowPod
		fragments []string // nil: admitted
	}{
		{"a shrunk request", change(func(sp *offv1beta1.ShadowPod) {
			sp.Spec.Pod.Containers[0].Resources.Requests = webhooktest.List("cpu", "100m")
		}),
			[]string{"immutable", `container "app"`, "requests", "cpu=1", "cpu=100m"}},
		{"a raised limit", change(func(sp *offv1beta1.ShadowPod) {
			sp.Spec.Pod.Containers[0].Resources.Limits = webhooktest.List("cpu", "4")
		}),
			[]string{"immutable", `container "app"`, "limits"}},
		{"an init container's request dropped", change(func(sp *offv1beta1.ShadowPod) {
			sp.Spec.Pod.InitContainers[0].Resources = corev1.ResourceRequirements{}
		}),
			[]string{"immutable", `init container "setup"`}},
		{"pod-level resources added", change(func(sp *offv1beta1.ShadowPod) {
			sp.Spec.Pod.Resources = &corev1.ResourceRequirements{Requests: webhooktest.List("cpu", "1")}
		}), []string{"immutable", "spec.pod.resources"}},
		{"an init container made a sidecar", change(func(sp *offv1beta1.ShadowPod) {
			sp.Spec.Pod.InitContainers[0].RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
		}), []string{"immutable", "cpu=1", "cpu=2"}},
		{"a label", change(func(sp *offv1beta1.ShadowPod) { sp.Labels["app"] = "web" }), nil},
		{"the same amounts written otherwise", change(func(sp *offv1beta1.ShadowPod) {
			sp.Spec.Pod.Containers[0].Resources.Requests = webhooktest.List("cpu", "1000m")
		}), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := v.Handle(ctx, webhooktest.ShadowPodReview(t, "xi", tt.sp, old, false, nil))
			if tt.fragments == nil {
				if !resp.Allowed {
					t.Errorf("refused: %v", resp.Result)
				}
				return
			}
			webhooktest.WantRefused(t, tt.name, resp, tt.fragments...)
		})
	}
}

// TestShadowPodShrinkKeepsQuota shrinks a stored ShadowPod through the API
// server, then asks for the share the shrink would have freed.
func TestShadowPodShrinkKeepsQuota(t *testing.T) {
	ctx := context.Background()
	webhooktest.Consumer(t, "omicron", offv1beta1.SoftLimitsEnforcement, webhooktest.List("cpu", "1", "pods", "10"))
	big := webhooktest.ShadowPod("big", webhooktest.Twin("omicron"), "omicron", "1", "")
	if err := webhooktest.Cl.Create(ctx, big); err != nil {
		t.Fatal(err)
	}
	big.Spec.Pod.Containers[0].Resources.Requests = webhooktest.List("cpu", "100m")
	// The CRD's transition rule or the webhook refuses it, whichever comes
	// first.
	if err := webhooktest.Cl.Update(ctx, big); err == nil || !strings.Contains(err.Error(), "immutable") {
		t.Errorf("shrinking a ShadowPod: err = %v, want a refusal saying its resources are immutable", err)
	}
	err := webhooktest.Cl.Create(ctx, webhooktest.ShadowPod("squatter", webhooktest.Twin("omicron"), "omicron", "500m", ""))
	webhooktest.WantDenied(t, "a ShadowPod in the share a shrink would have freed", err, "quota usage exceeded: cpu requested 500m, used 1 of 1")
}

// TestShadowPodDryRun: a server-side dry run is answered as the real
// request would be, and reserves nothing, so a forged dry run filling the
// quota cannot block the real pods that follow.
func TestShadowPodDryRun(t *testing.T) {
	ctx := context.Background()
	webhooktest.Consumer(t, "pi", offv1beta1.SoftLimitsEnforcement, webhooktest.List("cpu", "1", "pods", "10"))
	if err := webhooktest.Cl.Create(ctx, webhooktest.ShadowPod("probe", webhooktest.Twin("pi"), "pi", "1", ""), client.DryRunAll); err != nil {
		t.Fatalf("a dry run within quota: %v", err)
	}
	webhooktest.WantDenied(t, "a dry run over quota", webhooktest.Cl.Create(ctx, webhooktest.ShadowPod("over", webhooktest.Twin("pi"), "pi", "2", ""), client.DryRunAll),
		"quota usage exceeded: cpu requested 2, used 0 of 1")
	if err := webhooktest.Cl.Create(ctx, webhooktest.ShadowPod("real", webhooktest.Twin("pi"), "pi", "1", "")); err != nil {
		t.Errorf("a real ShadowPod filling the quota after a dry run of the same size: %v", err)
	}
	// Straight to the webhook, many dry runs of one name hold nothing either.
	v := directValidator(podpolicy.PodPolicy{})
	fits := webhooktest.ShadowPod("fits", webhooktest.Twin("pi"), "pi", "1", "")
	for i := range 3 {
		if resp := v.Handle(ctx, webhooktest.ShadowPodReview(t, "pi", fits, nil, true, nil)); !resp.Allowed {
			t.Fatalf("dry run %d of a ShadowPod filling the quota refused: %v", i, resp.Result)
		}
	}
	other := webhooktest.ShadowPod("other", webhooktest.Twin("pi"), "pi", "1", "")
	if resp := v.Handle(ctx, webhooktest.ShadowPodReview(t, "pi", other, nil, false, nil)); !resp.Allowed {
		t.Errorf("a real ShadowPod after dry runs refused: %v", resp.Result)
	}
}

// TestShadowPodDuplicateCreateKeepsQuota creates again, smaller, a stored
// ShadowPod: the API server refuses the name after the webhook admitted the
// request, and the reservation left must not stand in for the stored
// ShadowPod's larger usage until it lapses.
func TestShadowPodDuplicateCreateKeepsQuota(t *testing.T) {
	ctx := context.Background()
	webhooktest.Consumer(t, "rho", offv1beta1.SoftLimitsEnforcement, webhooktest.List("cpu", "1", "pods", "10"))
	if err := webhooktest.Cl.Create(ctx, webhooktest.ShadowPod("big", webhooktest.Twin("rho"), "rho", "1", "")); err != nil {
		t.Fatal(err)
	}
	// Once the ledger holds it as stored, not only as reserved.
	webhooktest.WaitUsed(t, "the ShadowPod in the quota's status", "rho", webhooktest.List("cpu", "1", "pods", "1"))
	err := webhooktest.Cl.Create(ctx, webhooktest.ShadowPod("big", webhooktest.Twin("rho"), "rho", "1m", ""))
	if err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("creating a ShadowPod under a name taken: err = %v, want already exists", err)
	}
	webhooktest.WantDenied(t, "a ShadowPod in the share a refused duplicate would have freed",
		webhooktest.Cl.Create(ctx, webhooktest.ShadowPod("squatter", webhooktest.Twin("rho"), "rho", "500m", "")), "quota usage exceeded: cpu requested 500m")
}
