package budget_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/webhook/budget"
	"github.com/liqo-go/liqo/pkg/webhook/internal/servertest"
	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
)

const kib900 = 900 << 10

// TestObjectBudgetBytes fills a consumer's byte budget with ConfigMaps of
// 900 KiB across two twins, with its own credentials: the next ConfigMap,
// a Secret, and an update growing a small ConfigMap are refused naming the
// rule; updates that shrink pass, and space freed by a shrink or a delete
// is given again.
func TestObjectBudgetBytes(t *testing.T) {
	ctx := context.Background()
	hog, twins := webhooktest.ReflectingConsumer(t, "bytes-hog", "big", "more")
	for i := range 4 {
		if err := hog.Create(ctx, webhooktest.Blob(fmt.Sprint("blob-", i), twins[i%2], "bytes-hog", kib900)); err != nil {
			t.Fatalf("ConfigMap %d of 900 KiB, within the budget: %v", i, err)
		}
	}
	small := webhooktest.Blob("small", twins[0], "bytes-hog", 1024)
	if err := hog.Create(ctx, small); err != nil {
		t.Fatalf("a small ConfigMap in what is left: %v", err)
	}

	err := hog.Create(ctx, webhooktest.Blob("blob-4", twins[1], "bytes-hog", kib900))
	webhooktest.WantReflectedDenied(t, "a fifth ConfigMap of 900 KiB", err, "quota usage exceeded: bytes requested", "consumer bytes-hog",
		"offloading.tenantObjects.maxBytes (--max-tenant-object-bytes)")
	secret := &corev1.Secret{ObjectMeta: webhooktest.ReflectedConfigMap("key", twins[0], "bytes-hog").ObjectMeta,
		Data: map[string][]byte{"key": make([]byte, 600<<10)}}
	webhooktest.WantReflectedDenied(t, "a Secret of 600 KiB", hog.Create(ctx, secret), "quota usage exceeded: bytes requested")

	small.Data["blob"] = strings.Repeat("y", kib900)
	webhooktest.WantReflectedDenied(t, "a small ConfigMap grown to 900 KiB", hog.Update(ctx, small), "quota usage exceeded: bytes requested")

	// Over the budget or not, what does not grow passes.
	var first corev1.ConfigMap
	if err := hog.Get(ctx, client.ObjectKey{Namespace: twins[0], Name: "blob-0"}, &first); err != nil {
		t.Fatal(err)
	}
	first.Data = map[string]string{"blob": "short"}
	if err := hog.Update(ctx, &first); err != nil {
		t.Fatalf("shrinking a ConfigMap: %v", err)
	}
	webhooktest.Eventually(t, "the space the shrink freed", func(ctx context.Context) (bool, error) {
		err := hog.Create(ctx, webhooktest.Blob("blob-4", twins[1], "bytes-hog", kib900))
		return err == nil, err
	})
	webhooktest.WantReflectedDenied(t, "a sixth ConfigMap of 900 KiB", hog.Create(ctx, webhooktest.Blob("blob-5", twins[0], "bytes-hog", kib900)), "bytes requested")
	if err := hog.Delete(ctx, webhooktest.Blob("blob-1", twins[1], "bytes-hog", 0)); err != nil {
		t.Fatal(err)
	}
	webhooktest.Eventually(t, "the space the delete freed", func(ctx context.Context) (bool, error) {
		err := hog.Create(ctx, webhooktest.Blob("blob-5", twins[0], "bytes-hog", kib900))
		return err == nil, err
	})
}

// TestObjectBudgetCount fills a consumer's object count with every kind it
// writes in bulk, in its twin and its tenant namespace, with its own
// credentials: Services, ShadowEndpointSlices, ConfigMaps, ResourceSlices
// and ExportRecords count together, with the NamespaceMap it has; the next
// object of any kind is refused by the webhook that judges its kind, and a
// deleted object's place is given again.
func TestObjectBudgetCount(t *testing.T) {
	ctx := context.Background()
	hog, twins := webhooktest.ReflectingConsumer(t, "count-hog", "many")
	webhooktest.RemoteControlPlane(t, "count-hog")
	// Its NamespaceMap counts: 1.
	objects := []client.Object{webhooktest.ReplicaSlice("slice-0", "count-hog"), webhooktest.ExportRecord("exported", "count-hog")}
	for i := range (servertest.BudgetCount - 3) / 3 {
		objects = append(objects, webhooktest.ReflectedService(fmt.Sprint("svc-", i), twins[0], "count-hog"),
			webhooktest.ReflectedSlice(fmt.Sprint("slice-", i), twins[0], "count-hog"), webhooktest.ReflectedConfigMap(fmt.Sprint("cm-", i), twins[0], "count-hog"))
	}
	if len(objects) != servertest.BudgetCount-1 {
		t.Fatalf("the test makes %d objects, want %d", len(objects), servertest.BudgetCount-1)
	}
	for _, o := range objects {
		webhooktest.Eventually(t, "the RBAC of "+o.GetName(), func(ctx context.Context) (bool, error) {
			err := hog.Create(ctx, o)
			return err == nil, err
		})
	}

	webhooktest.WantReflectedDenied(t, "one ShadowEndpointSlice more", hog.Create(ctx, webhooktest.ReflectedSlice("one-more", twins[0], "count-hog")),
		"quota usage exceeded: objects requested 1, used 60 of 60", "offloading.tenantObjects.maxCount (--max-tenant-objects)")
	webhooktest.WantReflectedDenied(t, "one Service more", hog.Create(ctx, webhooktest.ReflectedService("one-more", twins[0], "count-hog")), "objects requested 1")
	err := hog.Create(ctx, webhooktest.ReplicaSlice("one-more", "count-hog"))
	if !apierrors.IsForbidden(err) || !webhooktest.ContainsAll(err.Error(), `admission webhook "replica.validate.liqo.io" denied the request`,
		"objects requested 1, used 60 of 60") {
		t.Errorf("one ResourceSlice more: err = %v, want the replicas' webhook's refusal", err)
	}
	err = hog.Create(ctx, webhooktest.ExportRecord("one-more", "count-hog"))
	if !apierrors.IsForbidden(err) || !webhooktest.ContainsAll(err.Error(), `admission webhook "replica.validate.liqo.io" denied the request`,
		"objects requested 1, used 60 of 60") {
		t.Errorf("one ExportRecord more: err = %v, want the replicas' webhook's refusal", err)
	}

	if err := hog.Delete(ctx, webhooktest.ReflectedService("svc-0", twins[0], "count-hog")); err != nil {
		t.Fatal(err)
	}
	webhooktest.Eventually(t, "the place the delete freed", func(ctx context.Context) (bool, error) {
		err := hog.Create(ctx, webhooktest.ReflectedSlice("one-more", twins[0], "count-hog"))
		return err == nil, err
	})
}

// TestObjectBudgetConcurrent sends a burst of creates at once, each
// fitting alone: no more than the budget holds may pass.
func TestObjectBudgetConcurrent(t *testing.T) {
	hog, twins := webhooktest.ReflectingConsumer(t, "burst-hog", "burst")
	const burst = 16
	var wg sync.WaitGroup
	errs := make([]error, burst)
	for i := range burst {
		wg.Go(func() {
			errs[i] = hog.Create(context.Background(), webhooktest.Blob(fmt.Sprint("blob-", i), twins[0], "burst-hog", kib900))
		})
	}
	wg.Wait()
	admitted := 0
	for _, err := range errs {
		switch {
		case err == nil:
			admitted++
		case !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "bytes requested"):
			t.Errorf("a create refused for another reason than the budget: %v", err)
		}
	}
	// 4 MiB hold four ConfigMaps of 900 KiB, not five.
	if admitted != 4 {
		t.Errorf("%d of %d ConfigMaps of 900 KiB admitted at once, want the 4 the budget holds", admitted, burst)
	}
	var stored corev1.ConfigMapList
	if err := webhooktest.Cl.List(context.Background(), &stored, client.InNamespace(twins[0]), client.MatchingLabels{consts.OriginClusterIDLabel: "burst-hog"}); err != nil {
		t.Fatal(err)
	}
	var total int64
	for i := range stored.Items {
		size, err := budget.SizeOf(&stored.Items[i])
		if err != nil {
			t.Fatal(err)
		}
		total += size
	}
	if total > servertest.BudgetBytes {
		t.Errorf("the consumer stores %d bytes, over its budget of %d", total, servertest.BudgetBytes)
	}
}

// TestObjectBudgetShadowPodBytes: ShadowPods count by size in the same
// budget (their number is the Quota's), so a consumer with room for many
// pods cannot fill etcd with a few large ones: ShadowPods carrying 900 KiB
// of environment each fill it, and the next is refused by the ShadowPod
// webhook naming the rule, before its quota is looked at.
func TestObjectBudgetShadowPodBytes(t *testing.T) {
	ctx := context.Background()
	webhooktest.Consumer(t, "pod-hog", offv1beta1.SoftLimitsEnforcement, webhooktest.List("cpu", "100", "pods", "100"))
	hog := webhooktest.AsConsumer(t, "pod-hog", webhooktest.Twin("pod-hog"))
	large := func(name string) *offv1beta1.ShadowPod {
		sp := webhooktest.ShadowPod(name, webhooktest.Twin("pod-hog"), "pod-hog", "", "")
		sp.Spec.Pod.Containers[0].Env = []corev1.EnvVar{{Name: "BLOB", Value: strings.Repeat("x", kib900)}}
		return sp
	}
	for i := range 4 {
		if err := hog.Create(ctx, large(fmt.Sprint("large-", i))); err != nil {
			t.Fatalf("ShadowPod %d of 900 KiB, within the budget: %v", i, err)
		}
	}
	err := hog.Create(ctx, large("large-4"))
	if !apierrors.IsForbidden(err) || !webhooktest.ContainsAll(err.Error(), `admission webhook "shadowpod.validate.liqo.io" denied the request`,
		"quota usage exceeded: bytes requested", "offloading.tenantObjects.maxBytes") {
		t.Errorf("a fifth ShadowPod of 900 KiB: err = %v, want the ShadowPod webhook's refusal naming the byte budget", err)
	}
	if err := hog.Create(ctx, webhooktest.ShadowPod("small", webhooktest.Twin("pod-hog"), "pod-hog", "", "")); err != nil {
		t.Errorf("a small ShadowPod in what is left: %v", err)
	}
}

// TestEventBudget records, as a consumer with its own credentials, Events
// in its tenant namespace until its budget is spent: Events of the legacy
// API have no size limit, and the next one is refused naming the rule;
// repeating an Event already counted still passes.
func TestEventBudget(t *testing.T) {
	ctx := context.Background()
	hog, _ := webhooktest.ReflectingConsumer(t, "event-hog", "app")
	webhooktest.RemoteControlPlane(t, "event-hog")
	tenant := consts.TenantNamespace("event-hog")
	event := func(name string) *corev1.Event {
		return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tenant},
			InvolvedObject: corev1.ObjectReference{Kind: "ResourceSlice", Namespace: tenant, Name: "slice"},
			Reason:         "Flooding", Message: strings.Repeat("x", 64<<10), Type: corev1.EventTypeNormal, Count: 1}
	}
	// 60 Events of 64 KiB fit in 4 MiB, with a little to spare.
	for i := range servertest.BudgetCount {
		e := event(fmt.Sprint("flood-", i))
		webhooktest.Eventually(t, "the RBAC of the Events", func(ctx context.Context) (bool, error) {
			err := hog.Create(ctx, e)
			return err == nil, err
		})
	}
	err := hog.Create(ctx, event("one-more"))
	if !apierrors.IsForbidden(err) || !webhooktest.ContainsAll(err.Error(), `admission webhook "event.validate.liqo.io" denied the request`,
		"objects requested 1, used 60 of 60", "recorded as many Events", "--max-tenant-objects") {
		t.Errorf("one Event more: err = %v, want the Events' webhook's refusal", err)
	}
	// As a recorder counts a repeat: a patch, the consumer's only right
	// on its Events but create.
	if err := hog.Patch(ctx, event("flood-0"), client.RawPatch(types.MergePatchType, []byte(`{"count":2}`))); err != nil {
		t.Errorf("a repeat of an Event already counted: %v", err)
	}
}

// TestShadowEndpointSliceBounded: a consumer's ShadowEndpointSlice holds
// at most what an EndpointSlice may (1,000 endpoints, 100 ports), so one
// the provider could never keep is refused when written, by the CRD.
func TestShadowEndpointSliceBounded(t *testing.T) {
	ctx := context.Background()
	hog, twins := webhooktest.ReflectingConsumer(t, "slice-hog", "app")
	wide := webhooktest.ReflectedSlice("wide", twins[0], "slice-hog")
	wide.Spec.Template.Endpoints = nil
	for i := range 1001 {
		wide.Spec.Template.Endpoints = append(wide.Spec.Template.Endpoints,
			discoveryv1.Endpoint{Addresses: []string{fmt.Sprintf("10.70.%d.%d", i/250, i%250+1)}})
	}
	err := hog.Create(ctx, wide)
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.template.endpoints: Too many: 1001: must have at most 1000 items") {
		t.Errorf("a ShadowEndpointSlice of 1,001 endpoints: err = %v, want the CRD's refusal", err)
	}
	wide.Spec.Template.Endpoints = wide.Spec.Template.Endpoints[:1000]
	if err := hog.Create(ctx, wide); err != nil {
		t.Errorf("a ShadowEndpointSlice of 1,000 endpoints: %v", err)
	}
}
