package peering

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/consts"
)

// EnsureTenantNamespace creates or labels the tenant namespace name of the
// peer remoteID; it refuses one being deleted.
func EnsureTenantNamespace(ctx context.Context, c client.Client, name, remoteID string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	_, err := Apply(ctx, c, ns, func() error {
		if !ns.DeletionTimestamp.IsZero() {
			return fmt.Errorf("namespace %s is being deleted (an unpeer is in progress); retry when it is gone", name)
		}
		if ns.Labels == nil {
			ns.Labels = map[string]string{}
		}
		ns.Labels[consts.TenantNamespaceLabel] = "true"
		ns.Labels[consts.RemoteClusterIDLabel] = remoteID
		ns.Labels[consts.ManagedByLabel] = consts.ManagedByValue
		return nil
	})
	return err
}
