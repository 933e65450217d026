package slices

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// tenant sets up on the provider what an established peering with consumer
// id leaves: its tenant namespace and its Ready Tenant.
func tenant(t *testing.T, id string) {
	t.Helper()
	ctx := context.Background()
	if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: consts.TenantNamespace(id)}}); err != nil {
		t.Fatal(err)
	}
	tn := &authv1beta1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: consts.TenantNamespace(id)},
		Spec: authv1beta1.TenantSpec{ClusterID: corev1beta1.ClusterID(id), PublicKey: []byte("key")}}
	if err := cl.Create(ctx, tn); err != nil {
		t.Fatal(err)
	}
	meta.SetStatusCondition(&tn.Status.Conditions, metav1.Condition{Type: authv1beta1.ReadyCondition, Status: metav1.ConditionTrue, Reason: "Test"})
	if err := cl.Status().Update(ctx, tn); err != nil {
		t.Fatal(err)
	}
}

// replica is consumer id's slice as its replicator writes it on provider
// "milan".
func replica(id string, resources corev1.ResourceList) *authv1beta1.ResourceSlice {
	consumer, provider := corev1beta1.ClusterID(id), corev1beta1.ClusterID("milan")
	return &authv1beta1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "milan", Namespace: consts.TenantNamespace(id),
		Labels: map[string]string{consts.ReplicationLabel: "true"}},
		Spec: authv1beta1.ResourceSliceSpec{ConsumerClusterID: &consumer, ProviderClusterID: &provider, Resources: resources}}
}

func provider() *ProviderReconciler {
	return &ProviderReconciler{Client: cl, ClusterID: "milan", SharingPercentage: 50,
		Enforcement: offv1beta1.HardLimitsEnforcement, Recorder: record.NewFakeRecorder(100)}
}

// waitNodeReady waits for the testbed's node to be Ready: until then the
// provider has nothing to share.
func waitNodeReady(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var nodes corev1.NodeList
		if err := cl.List(ctx, &nodes); err != nil {
			return false, nil
		}
		for i := range nodes.Items {
			if nodeReady(&nodes.Items[i]) {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no Ready node: %v", err)
	}
}

// TestQuotaBoundsUnnamedResources: a slice naming only pods must not leave
// its consumer's cpu and memory unbounded; they are asked for at their
// defaults and clamped like any request.
func TestQuotaBoundsUnnamedResources(t *testing.T) {
	ctx := context.Background()
	waitNodeReady(t)
	tenant(t, "rome")
	s := replica("rome", rl("", "", "10"))
	if err := cl.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	if _, err := provider().Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(s)}); err != nil {
		t.Fatal(err)
	}
	var q offv1beta1.Quota
	if err := cl.Get(ctx, client.ObjectKeyFromObject(s), &q); err != nil {
		t.Fatalf("the accepted slice's Quota: %v", err)
	}
	want := rl("4", "8Gi", "10")
	// The testbed's node reports 100Gi of ephemeral storage, as kubelets do.
	want[corev1.ResourceEphemeralStorage] = resource.MustParse("20Gi")
	if authv1beta1.CanonicalResources(q.Spec.Resources) != authv1beta1.CanonicalResources(want) {
		t.Errorf("Quota resources = %s, want %s", authv1beta1.CanonicalResources(q.Spec.Resources), authv1beta1.CanonicalResources(want))
	}
}
