package controllermanager

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/liqo-go/liqo/deploy/charts/liqo/files/rbac"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager/gateway"
	"github.com/liqo-go/liqo/pkg/identity"
)

// bootstrap creates what must exist before any controller runs: the
// components' namespace, the cluster-ID ConfigMap peers and liqoctl read,
// the identity key pair, and the ClusterRoles the manager binds peers and
// gateways to (generated from markers, embedded from the chart's files).
//
// In the cluster the chart installs the namespace and the ClusterRoles
// (the manager has no right to write ClusterRoles): only a self-provisioned
// manager creates them.
func bootstrap(ctx context.Context, cs kubernetes.Interface, o *Options) (*identity.Keys, error) {
	if o.SelfProvision {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.Namespace}}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("creating namespace %s: %w", o.Namespace, err)
		}
	}
	if err := ensureClusterIDConfigMap(ctx, cs, o); err != nil {
		return nil, err
	}
	keys, err := identity.Ensure(ctx, cs, o.Namespace)
	if err != nil {
		return nil, err
	}
	if !o.SelfProvision {
		return keys, nil
	}
	for _, name := range peeringClusterRoles {
		if err := ensureClusterRole(ctx, cs, name); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// clusterIDConfigMapLabels are the labels of the cluster-ID ConfigMap: ours,
// and the one the reference's tools select it by.
func clusterIDConfigMapLabels() map[string]string {
	return map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.AppNameLabel: consts.ClusterIDConfigMapAppName}
}

// ensureClusterIDConfigMap records the cluster ID once; starting with a
// different ID later is refused, as peers already know this cluster by it.
func ensureClusterIDConfigMap(ctx context.Context, cs kubernetes.Interface, o *Options) error {
	cms := cs.CoreV1().ConfigMaps(o.Namespace)
	want := map[string]string{consts.ClusterIDKey: o.ClusterID, consts.ClusterLabelsKey: FormatLabels(o.ClusterLabels)}
	cm, err := cms.Get(ctx, consts.ClusterIDConfigMap, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		cm = &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: consts.ClusterIDConfigMap, Labels: clusterIDConfigMapLabels()},
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
	if cm.Data[consts.ClusterIDKey] == want[consts.ClusterIDKey] && cm.Data[consts.ClusterLabelsKey] == want[consts.ClusterLabelsKey] &&
		cm.Labels[consts.AppNameLabel] == consts.ClusterIDConfigMapAppName {
		return nil
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	maps.Copy(cm.Data, want)
	if cm.Labels == nil {
		cm.Labels = map[string]string{}
	}
	// Made by an older version, or by hand: labelled now, so that tools
	// written for the reference find it.
	cm.Labels[consts.AppNameLabel] = consts.ClusterIDConfigMapAppName
	_, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
	return err
}

// ConsumerClusterRole is the ClusterRole a provider binds a consumer's
// control plane to in its tenant namespace; its rules are the markers of
// pkg/rbac/remotecontrolplane.
const ConsumerClusterRole = "liqo-remote-controlplane"

// OffloadingClusterRole is the ClusterRole a provider binds a consumer to
// in its twin namespaces; its rules are the markers of
// pkg/rbac/remoteoffloading.
const OffloadingClusterRole = "liqo-remote-offloading"

// peeringClusterRoles are the ClusterRoles the manager binds peers and
// gateways to.
var peeringClusterRoles = []string{ConsumerClusterRole, OffloadingClusterRole, gateway.GatewayClusterRole, gateway.GatewayNodesClusterRole}

// clusterRoleFieldOwner is the field manager of the peering ClusterRoles.
const clusterRoleFieldOwner = "liqo-controller-manager"

// ensureClusterRole applies the generated ClusterRole name with our labels,
// unless it finds it so: writing ClusterRoles takes an administrator's
// rights (see rbac.go), reading these four does not. Server-side apply
// replaces the rules (an atomic list) whoever wrote them last.
func ensureClusterRole(ctx context.Context, cs kubernetes.Interface, name string) error {
	r, err := rbac.ClusterRole(name)
	if err != nil {
		return err
	}
	r.TypeMeta = metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"}
	r.Labels = map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.PartOfLabel: consts.PartOfValue}
	got, err := cs.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("reading ClusterRole %s: %w", name, err)
	case equality.Semantic.DeepEqual(got.Rules, r.Rules) && hasLabels(got.Labels, r.Labels):
		return nil
	}
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = cs.RbacV1().ClusterRoles().Patch(ctx, name, types.ApplyPatchType, data,
		metav1.PatchOptions{FieldManager: clusterRoleFieldOwner, Force: ptr.To(true)})
	if err != nil {
		return fmt.Errorf("applying ClusterRole %s: %w", name, err)
	}
	return nil
}

// hasLabels tells whether have holds every label of want.
func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

func readFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the cluster CA: %w", err)
	}
	return b, nil
}
