package shadowpod_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
)

// TestTenantConditionRefusesNewShadowPods: a consumer whose Tenant is
// Cordoned or Drained sends new ShadowPods and sees them refused, naming
// the Tenant's field; its existing ShadowPods may still be updated, and
// once Active again it is admitted. Before, spec.tenantCondition was
// stored and ignored.
func TestTenantConditionRefusesNewShadowPods(t *testing.T) {
	ctx := context.Background()
	webhooktest.Consumer(t, "psi", offv1beta1.HardLimitsEnforcement, webhooktest.List("cpu", "2", "pods", "10"))
	psi := webhooktest.AsConsumer(t, "psi", webhooktest.Twin("psi"))
	tenant := &authv1beta1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "psi", Namespace: consts.TenantNamespace("psi")},
		Spec: authv1beta1.TenantSpec{ClusterID: corev1beta1.ClusterID("psi"), TenantCondition: authv1beta1.TenantActive}}
	if err := webhooktest.Cl.Create(ctx, tenant); err != nil {
		t.Fatal(err)
	}
	running := webhooktest.ShadowPod("running", webhooktest.Twin("psi"), "psi", "100m", "")
	if err := psi.Create(ctx, running); err != nil {
		t.Fatalf("a ShadowPod of an Active tenant: %v", err)
	}

	setCondition := func(c authv1beta1.TenantCondition) {
		t.Helper()
		if err := webhooktest.Cl.Get(ctx, client.ObjectKeyFromObject(tenant), tenant); err != nil {
			t.Fatal(err)
		}
		tenant.Spec.TenantCondition = c
		if err := webhooktest.Cl.Update(ctx, tenant); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range []authv1beta1.TenantCondition{authv1beta1.TenantCordoned, authv1beta1.TenantDrained} {
		setCondition(c)
		name := fmt.Sprintf("new-%d", i)
		webhooktest.Eventually(t, "the "+string(c)+" tenant refused", func(ctx context.Context) (bool, error) {
			err := psi.Create(ctx, webhooktest.ShadowPod(name, webhooktest.Twin("psi"), "psi", "100m", ""))
			if err == nil {
				return false, fmt.Errorf("a ShadowPod admitted for a %s tenant", c)
			}
			return strings.Contains(err.Error(), "is "+string(c)+" (spec.tenantCondition)"), err
		})
		err := psi.Create(ctx, webhooktest.ShadowPod(name, webhooktest.Twin("psi"), "psi", "100m", ""))
		webhooktest.WantDenied(t, "a new ShadowPod of a "+string(c)+" tenant", err,
			"the Tenant liqo-tenant-psi/psi of consumer psi is "+string(c)+" (spec.tenantCondition): new ShadowPods are refused until it is Active again")
		// An administrator is refused too: the tenant is the pods' owner.
		err = webhooktest.Cl.Create(ctx, webhooktest.ShadowPod(name, webhooktest.Twin("psi"), "psi", "100m", ""))
		webhooktest.WantDenied(t, "an administrator's new ShadowPod for a "+string(c)+" tenant", err, "(spec.tenantCondition)")

		if err := psi.Get(ctx, client.ObjectKeyFromObject(running), running); err != nil {
			t.Fatal(err)
		}
		running.Labels["touched"] = string(c)
		if err := psi.Update(ctx, running); err != nil {
			t.Errorf("an update of an existing ShadowPod of a %s tenant was refused: %v", c, err)
		}
	}

	setCondition(authv1beta1.TenantActive)
	webhooktest.Eventually(t, "the tenant admitted again once Active", func(ctx context.Context) (bool, error) {
		err := psi.Create(ctx, webhooktest.ShadowPod("again", webhooktest.Twin("psi"), "psi", "100m", ""))
		return err == nil, err
	})
}
