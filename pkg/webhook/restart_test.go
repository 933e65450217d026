package webhook

import (
	"bytes"
	"context"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
	"github.com/liqo-go/liqo/pkg/webhook/podplacement"
)

func registered(t *testing.T) (*admissionv1.MutatingWebhookConfiguration, *admissionv1.ValidatingWebhookConfiguration) {
	t.Helper()
	ctx := context.Background()
	m := &admissionv1.MutatingWebhookConfiguration{}
	v := &admissionv1.ValidatingWebhookConfiguration{}
	if err := cl.Get(ctx, client.ObjectKey{Name: MutatingConfigurationName}, m); err != nil {
		t.Fatal(err)
	}
	if err := cl.Get(ctx, client.ObjectKey{Name: ValidatingConfigurationName}, v); err != nil {
		t.Fatal(err)
	}
	return m, v
}

func TestRegistration(t *testing.T) {
	m, v := registered(t)
	if len(m.Webhooks) != 2 || len(v.Webhooks) != 4 {
		t.Fatalf("webhooks: %d mutating, %d validating; want 2 and 4", len(m.Webhooks), len(v.Webhooks))
	}
	pod, ds, sp, reflected := m.Webhooks[0], m.Webhooks[1], v.Webhooks[0], v.Webhooks[1]
	if pod.Name != PodWebhookName || ds.Name != DaemonSetWebhookName || sp.Name != ShadowPodWebhookName || reflected.Name != ReflectedWebhookName {
		t.Errorf("webhook names %q, %q, %q, %q", pod.Name, ds.Name, sp.Name, reflected.Name)
	}
	if ds.FailurePolicy == nil || *ds.FailurePolicy != admissionv1.Ignore {
		t.Errorf("the DaemonSet webhook fails %v, want Ignore (no DaemonSet of the cluster may wait on it)", ds.FailurePolicy)
	}
	for _, w := range []struct {
		name    string
		policy  *admissionv1.FailurePolicyType
		effects *admissionv1.SideEffectClass
		timeout *int32
		ca      []byte
	}{
		{pod.Name, pod.FailurePolicy, pod.SideEffects, pod.TimeoutSeconds, pod.ClientConfig.CABundle},
		{sp.Name, sp.FailurePolicy, sp.SideEffects, sp.TimeoutSeconds, sp.ClientConfig.CABundle},
		{reflected.Name, reflected.FailurePolicy, reflected.SideEffects, reflected.TimeoutSeconds, reflected.ClientConfig.CABundle},
	} {
		if *w.policy != admissionv1.Fail || *w.effects != admissionv1.SideEffectClassNone || *w.timeout != timeoutSeconds || len(w.ca) == 0 {
			t.Errorf("%s: failurePolicy %s, sideEffects %s, timeout %d, caBundle %d bytes", w.name, *w.policy, *w.effects, *w.timeout, len(w.ca))
		}
	}
	want := &metav1.LabelSelector{MatchLabels: map[string]string{consts.SchedulingEnabledLabel: "true"}}
	if !equality.Semantic.DeepEqual(pod.NamespaceSelector, want) {
		t.Errorf("pod webhook namespaceSelector = %+v, want %+v", pod.NamespaceSelector, want)
	}
	// Every namespace, consumers only: a consumer's write anywhere is
	// judged, the provider's own never wait on the webhook.
	if len(reflected.NamespaceSelector.MatchLabels) > 0 || len(reflected.NamespaceSelector.MatchExpressions) > 0 ||
		len(reflected.MatchConditions) != 1 {
		t.Errorf("reflected webhook namespaceSelector = %+v, matchConditions %+v; want none and the consumers-only condition",
			reflected.NamespaceSelector, reflected.MatchConditions)
	}
}

// TestRestart stops the manager and starts another, as a crash and restart
// would: the new one registers its own port and CA, and rebuilds the quota
// usage from the stored ShadowPods.
func TestRestart(t *testing.T) {
	ctx := context.Background()
	webhooktest.Consumer(t, "eta", offv1beta1.SoftLimitsEnforcement, webhooktest.List("cpu", "1", "pods", "10"))
	if err := cl.Create(ctx, webhooktest.ShadowPod("before", webhooktest.Twin("eta"), "eta", "800m", "")); err != nil {
		t.Fatal(err)
	}
	oldM, _ := registered(t)

	running.Stop()
	next, err := startManager(cluster.Config, mainOptions())
	if err != nil {
		t.Fatalf("restarting: %v", err)
	}
	running = next

	// The new replica writes the mutating configuration, then the
	// validating one: both are read once the second names it too.
	newM, newV := registered(t)
	for deadline := time.Now().Add(10 * time.Second); baseOf(*newV.Webhooks[0].ClientConfig.URL) != baseOf(*newM.Webhooks[0].ClientConfig.URL) &&
		time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		newM, newV = registered(t)
	}
	if *newM.Webhooks[0].ClientConfig.URL == *oldM.Webhooks[0].ClientConfig.URL {
		t.Errorf("the URL did not change: %s", *newM.Webhooks[0].ClientConfig.URL)
	}
	if bytes.Equal(newM.Webhooks[0].ClientConfig.CABundle, oldM.Webhooks[0].ClientConfig.CABundle) ||
		!bytes.Equal(newM.Webhooks[0].ClientConfig.CABundle, newV.Webhooks[0].ClientConfig.CABundle) {
		t.Errorf("the caBundles were not replaced by the new one")
	}

	err = cl.Create(ctx, webhooktest.ShadowPod("after", webhooktest.Twin("eta"), "eta", "300m", ""))
	webhooktest.WantDenied(t, "a ShadowPod over the quota used before the restart", err, "used 800m of 1")
	if err := cl.Create(ctx, webhooktest.ShadowPod("small", webhooktest.Twin("eta"), "eta", "200m", "")); err != nil {
		t.Errorf("a ShadowPod fitting after the restart: %v", err)
	}
	webhooktest.OffloadedNamespace(t, "restarted", offv1beta1.NamespaceOffloadingSpec{PodOffloadingStrategy: offv1beta1.LocalPodOffloadingStrategy})
	pod := webhooktest.PlainPod("restarted")
	if err := cl.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	if terms := podplacement.RequiredTerms(pod); !equality.Semantic.DeepEqual(terms, []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.NotVirtual)}) {
		t.Errorf("the new server did not place the pod: %+v", terms)
	}
}
