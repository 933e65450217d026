package shadowpod_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	shadowpodctrl "github.com/liqo-go/liqo/pkg/controllermanager/shadowpod"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/pkg/webhook/internal/servertest"
	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
	"github.com/liqo-go/liqo/pkg/webhook/podpolicy"
	"github.com/liqo-go/liqo/test/harness"
)

// runShadowPods runs, for the rest of the test, the provider's ShadowPod
// controller over the namespaces given (those of one consumer, so that
// the other tests' ShadowPods get no pods), dropping the metadata-only
// keys of policy as the controller manager does.
func runShadowPods(t *testing.T, policy *podpolicy.PodPolicy, namespaces ...string) {
	t.Helper()
	scope := map[string]cache.Config{}
	for _, ns := range namespaces {
		scope[ns] = cache.Config{}
	}
	mgr, err := testbed.NewManager(webhooktest.Cluster.Config, cache.Options{DefaultNamespaces: scope, ByObject: shadowpodctrl.Caches(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&shadowpodctrl.Reconciler{Client: mgr.GetClient(), MetadataOnly: policy.MetadataOnly}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("the ShadowPod controller stopped: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}

// TestDefaultPolicyAdmitsOrdinaryPods sends, as a consumer and through the
// API server, the pods the default policy admits (the provider here also
// offers the nvidia runtime class, as the seeds' GPU provider would), and
// runs them with the provider's ShadowPod controller: Prometheus
// annotations reach the pod; a mesh's are kept on the ShadowPod only; a
// priority class of the provider's applies; the offered runtime class is
// used; an ephemeral volume's claim is made in the twin namespace. A
// system priority class and a runtime class not offered are refused,
// naming their rule.
func TestDefaultPolicyAdmitsOrdinaryPods(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	webhooktest.Consumer(t, "orca", offv1beta1.HardLimitsEnforcement, webhooktest.List("cpu", "10", "memory", "10Gi", "pods", "100"))
	orca := webhooktest.AsConsumer(t, "orca", webhooktest.Twin("orca"))
	for _, o := range []client.Object{
		&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "consumer-batch"}, Value: 1000},
		&nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "nvidia"}, Handler: "nvidia"},
		&nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "gvisor"}, Handler: "runsc"},
	} {
		if err := webhooktest.Cl.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = webhooktest.Cl.Delete(context.Background(), o) })
	}
	policy := servertest.Options().Pods
	runShadowPods(t, &policy, webhooktest.Twin("orca"), consts.TenantNamespace("orca"))

	scraped := webhooktest.ShadowPod("scraped", webhooktest.Twin("orca"), "orca", "100m", "")
	scraped.Annotations = map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "9090"}
	meshed := webhooktest.ShadowPod("meshed", webhooktest.Twin("orca"), "orca", "100m", "")
	meshed.Labels["sidecar.istio.io/inject"] = "true"
	meshed.Annotations = map[string]string{"sidecar.istio.io/inject": "true", "iam.amazonaws.com/role": "reader", "team": "shop"}
	batch := webhooktest.ShadowPod("batch", webhooktest.Twin("orca"), "orca", "100m", "")
	batch.Spec.Pod.PriorityClassName = "consumer-batch"
	gpu := webhooktest.ShadowPod("gpu", webhooktest.Twin("orca"), "orca", "100m", "")
	gpu.Spec.Pod.RuntimeClassName = ptr.To("nvidia")
	scratch := webhooktest.ShadowPod("scratch", webhooktest.Twin("orca"), "orca", "100m", "")
	scratch.Spec.Pod.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
		VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: webhooktest.List("storage", "1Gi")}}}}}}}
	for _, sp := range []*offv1beta1.ShadowPod{scraped, meshed, batch, gpu, scratch} {
		if err := orca.Create(ctx, sp); err != nil {
			t.Errorf("ShadowPod %s refused: %v", sp.Name, err)
		}
	}

	pod := func(name string, ok func(*corev1.Pod) bool) *corev1.Pod {
		t.Helper()
		var p corev1.Pod
		harness.Eventually(ctx, t, "pod "+name, func() (bool, error) {
			err := webhooktest.Cl.Get(ctx, types.NamespacedName{Namespace: webhooktest.Twin("orca"), Name: name}, &p)
			return err == nil && ok(&p), client.IgnoreNotFound(err)
		})
		return &p
	}
	running := func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning }

	if p := pod("scraped", running); p.Annotations["prometheus.io/scrape"] != "true" || p.Annotations["prometheus.io/port"] != "9090" {
		t.Errorf("the scraped pod's annotations: %v", p.Annotations)
	}
	p := pod("meshed", running)
	for _, k := range []string{"sidecar.istio.io/inject", "iam.amazonaws.com/role"} {
		if _, ok := p.Annotations[k]; ok {
			t.Errorf("the meshed pod carries annotation %s, which the provider's systems would act upon: %v", k, p.Annotations)
		}
	}
	if _, ok := p.Labels["sidecar.istio.io/inject"]; ok {
		t.Errorf("the meshed pod carries label sidecar.istio.io/inject: %v", p.Labels)
	}
	if p.Annotations["team"] != "shop" {
		t.Errorf("the meshed pod lost its own annotation: %v", p.Annotations)
	}
	var stored offv1beta1.ShadowPod
	if err := webhooktest.Cl.Get(ctx, client.ObjectKeyFromObject(meshed), &stored); err != nil || stored.Annotations["sidecar.istio.io/inject"] != "true" {
		t.Errorf("the meshed ShadowPod's annotations: %v (%v)", stored.Annotations, err)
	}
	if p := pod("batch", running); p.Spec.Priority == nil || *p.Spec.Priority != 1000 {
		t.Errorf("the batch pod's priority: %v", p.Spec.Priority)
	}
	if p := pod("gpu", running); p.Spec.RuntimeClassName == nil || *p.Spec.RuntimeClassName != "nvidia" {
		t.Errorf("the gpu pod's runtime class: %v", p.Spec.RuntimeClassName)
	}
	pod("scratch", func(*corev1.Pod) bool { return true })
	harness.Eventually(ctx, t, "the ephemeral volume's claim in the twin namespace", func() (bool, error) {
		err := webhooktest.Cl.Get(ctx, types.NamespacedName{Namespace: webhooktest.Twin("orca"), Name: "scratch-data"}, &corev1.PersistentVolumeClaim{})
		return err == nil, client.IgnoreNotFound(err)
	})

	critical := webhooktest.ShadowPod("critical", webhooktest.Twin("orca"), "orca", "100m", "")
	critical.Spec.Pod.PriorityClassName = "system-node-critical"
	webhooktest.WantDenied(t, "a system priority class", orca.Create(ctx, critical),
		`spec.pod.priorityClassName "system-node-critical" is a system priority class: offloaded pods may not preempt the provider's own components `+
			"[rule: offloading.podPolicy.maxPriority and allowedPriorityClasses (--max-pod-priority, --allowed-priority-classes; never a system class)]")
	sandboxed := webhooktest.ShadowPod("sandboxed", webhooktest.Twin("orca"), "orca", "100m", "")
	sandboxed.Spec.Pod.RuntimeClassName = ptr.To("gvisor")
	webhooktest.WantDenied(t, "a runtime class not offered", orca.Create(ctx, sandboxed),
		`spec.pod.runtimeClassName "gvisor" is not offered by the provider, which offers nvidia: the provider decides the runtime of offloaded pods `+
			"[rule: offloading.podPolicy.offeredRuntimeClasses (--offered-runtime-classes)]")
}
