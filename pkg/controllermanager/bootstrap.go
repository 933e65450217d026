package controllermanager

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager/gateway"
	"github.com/liqo-go/liqo/pkg/identity"
)

// bootstrap creates what must exist before any controller runs: the
// components' namespace, the cluster-ID ConfigMap peers and liqoctl read,
// the identity key pair, and the ClusterRole granted to consumers inside
// their tenant namespaces.
func bootstrap(ctx context.Context, cs kubernetes.Interface, o *Options) (*identity.Keys, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.Namespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("creating namespace %s: %w", o.Namespace, err)
	}
	if err := ensureClusterIDConfigMap(ctx, cs, o); err != nil {
		return nil, err
	}
	keys, err := identity.Ensure(ctx, cs, o.Namespace)
	if err != nil {
		return nil, err
	}
	if err := ensureClusterRole(ctx, cs, ConsumerClusterRole, consumerRules()); err != nil {
		return nil, err
	}
	if err := ensureClusterRole(ctx, cs, gateway.GatewayClusterRole, gateway.Rules()); err != nil {
		return nil, err
	}
	if err := ensureClusterRole(ctx, cs, gateway.GatewayNodesClusterRole, gateway.NodesRules()); err != nil {
		return nil, err
	}
	if err := ensureClusterRole(ctx, cs, OffloadingClusterRole, offloadingRules()); err != nil {
		return nil, err
	}
	return keys, nil
}

// ensureClusterIDConfigMap records the cluster ID once; starting with a
// different ID later is refused, as peers already know this cluster by it.
func ensureClusterIDConfigMap(ctx context.Context, cs kubernetes.Interface, o *Options) error {
	cms := cs.CoreV1().ConfigMaps(o.Namespace)
	want := map[string]string{consts.ClusterIDKey: o.ClusterID, consts.ClusterLabelsKey: FormatLabels(o.ClusterLabels)}
	cm, err := cms.Get(ctx, consts.ClusterIDConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		cm = &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: consts.ClusterIDConfigMap, Labels: map[string]string{consts.ManagedByLabel: consts.ManagedByValue}},
			Data:       want,
		}
		_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return fmt.Errorf("reading ConfigMap %s/%s: %w", o.Namespace, consts.ClusterIDConfigMap, err)
	}
	if got := cm.Data[consts.ClusterIDKey]; got != "" && got != o.ClusterID {
		return fmt.Errorf("this cluster is already known to its peers as %q (ConfigMap %s/%s); refusing to start as %q",
			got, o.Namespace, consts.ClusterIDConfigMap, o.ClusterID)
	}
	if cm.Data[consts.ClusterIDKey] == want[consts.ClusterIDKey] && cm.Data[consts.ClusterLabelsKey] == want[consts.ClusterLabelsKey] {
		return nil
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	for k, v := range want {
		cm.Data[k] = v
	}
	_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
	return err
}

// ConsumerClusterRole is what a consumer's control plane may do in its
// tenant namespace on the provider: negotiate resources, read its Tenant
// and Quotas, ask for namespaces. Nothing else; in particular no Secrets
// and no Pods.
const ConsumerClusterRole = "liqo-remote-controlplane"

func consumerRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"authentication.liqo.io"}, Resources: []string{"resourceslices"},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		{APIGroups: []string{"authentication.liqo.io"}, Resources: []string{"tenants"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"offloading.liqo.io"}, Resources: []string{"quotas"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"offloading.liqo.io"}, Resources: []string{"namespacemaps"},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
	}
}

// OffloadingClusterRole is what a consumer may do in its twin namespaces on
// the provider: run pods through ShadowPods (never Pods directly), publish
// endpoints through ShadowEndpointSlices (never EndpointSlices directly, so
// the provider decides what its Services route to), keep the reflected
// objects they need, and read its pods' status, logs and events.
const OffloadingClusterRole = "liqo-remote-offloading"

func offloadingRules() []rbacv1.PolicyRule {
	all := []string{"get", "list", "watch", "create", "update", "patch", "delete"}
	read := []string{"get", "list", "watch"}
	return []rbacv1.PolicyRule{
		{APIGroups: []string{"offloading.liqo.io"}, Resources: []string{"shadowpods", "shadowendpointslices"}, Verbs: all},
		// No ServiceAccounts: one the consumer made in a twin would be the
		// provider's to serve tokens for (issue 15); the consumer's pods
		// get their tokens from the consumer.
		{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets", "services"}, Verbs: all},
		{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses"}, Verbs: all},
		{APIGroups: []string{""}, Resources: []string{"pods", "events"}, Verbs: read},
		{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"pods/exec", "pods/attach", "pods/portforward"}, Verbs: []string{"create", "get"}},
	}
}

func ensureClusterRole(ctx context.Context, cs kubernetes.Interface, name string, rules []rbacv1.PolicyRule) error {
	want := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{consts.ManagedByLabel: consts.ManagedByValue}},
		Rules:      rules,
	}
	crs := cs.RbacV1().ClusterRoles()
	got, err := crs.Get(ctx, want.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = crs.Create(ctx, want, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	got.Rules = want.Rules
	_, err = crs.Update(ctx, got, metav1.UpdateOptions{})
	return err
}

func readFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the cluster CA: %w", err)
	}
	return b, nil
}
