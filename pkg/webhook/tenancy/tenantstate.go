package tenancy

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// TenantRefusal says why consumer may not start new ShadowPods because of
// the administrative state of its Tenant (spec.tenantCondition), or "" if
// it may. A Cordoned tenant keeps its running ShadowPods but starts no new
// one; a Drained one has its ShadowPods evicted (the provider's tenant
// state controller) and starts none either. Updates are never refused for
// this: they are what ends a ShadowPod's life.
func TenantRefusal(ctx context.Context, reader client.Reader, consumer string) (string, error) {
	ns := consts.TenantNamespace(consumer)
	var list authv1beta1.TenantList
	if err := reader.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return "", fmt.Errorf("listing the Tenants in %s: %w", ns, err)
	}
	for i := range list.Items {
		t := &list.Items[i]
		if string(t.Spec.ClusterID) != consumer {
			continue
		}
		if !t.Spec.TenantCondition.Active() {
			return fmt.Sprintf("the Tenant %s/%s of consumer %s is %s (spec.tenantCondition): new ShadowPods are refused until it is %s again",
				t.Namespace, t.Name, consumer, t.Spec.TenantCondition, authv1beta1.TenantActive), nil
		}
	}
	return "", nil
}
