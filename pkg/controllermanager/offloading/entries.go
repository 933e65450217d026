package offloading

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// setEntry lists namespace ns, twinned as remote, in the NamespaceMap of
// provider, creating the map if needed. Entries are written with merge
// patches of their own key, so that the reconcilers of several namespaces
// and the replicator's status updates never conflict.
func (r *NamespaceOffloadingReconciler) setEntry(ctx context.Context, provider, ns, remote string) error {
	key := consts.NamespaceMapKey(provider)
	var m offv1beta1.NamespaceMap
	err := r.Client.Get(ctx, key, &m)
	switch {
	case apierrors.IsNotFound(err):
		m = offv1beta1.NamespaceMap{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, Labels: namespaceMapLabels(provider)},
			Spec: offv1beta1.NamespaceMapSpec{DesiredMapping: map[string]string{ns: remote}}}
		err = r.Client.Create(ctx, &m)
		switch {
		case err == nil:
			return nil
		case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
			// The peering is being removed: its virtual node goes soon.
			ctrl.LoggerFrom(ctx).Info("not offloading to a provider being unpeered", "provider", provider)
			return nil
		case !apierrors.IsAlreadyExists(err):
			return err
		}
		// The cache had not seen the map yet: patch it.
	case err != nil:
		return err
	case m.Labels[consts.ReplicationLabel] != "":
		// A replica the provider made here as our consumer, under our
		// map's name: its entries would be its requests to us, not ours
		// to it. The replicas' webhook keeps consumers from making one.
		return fmt.Errorf("NamespaceMap %s/%s is a replica cluster %s made (label %s), not this cluster's map toward it: delete it to offload there",
			key.Namespace, key.Name, provider, consts.ReplicationLabel)
	case m.Spec.DesiredMapping[ns] == remote:
		return nil
	}
	return r.patchEntry(ctx, key, ns, &remote)
}

// dropEntry removes namespace ns from the NamespaceMap of provider.
func (r *NamespaceOffloadingReconciler) dropEntry(ctx context.Context, provider, ns string) error {
	return client.IgnoreNotFound(r.patchEntry(ctx, consts.NamespaceMapKey(provider), ns, nil))
}

// patchEntry sets (remote) or deletes (nil) one key of the desired mapping.
func (r *NamespaceOffloadingReconciler) patchEntry(ctx context.Context, key types.NamespacedName, ns string, remote *string) error {
	data, err := json.Marshal(map[string]any{"spec": map[string]any{"desiredMapping": map[string]*string{ns: remote}}})
	if err != nil {
		return err
	}
	m := &offv1beta1.NamespaceMap{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}
	return r.Client.Patch(ctx, m, client.RawPatch(types.MergePatchType, data))
}

// localMaps returns this cluster's NamespaceMaps by provider.
func (r *NamespaceOffloadingReconciler) localMaps(ctx context.Context) (map[string]*offv1beta1.NamespaceMap, error) {
	var list offv1beta1.NamespaceMapList
	if err := r.Client.List(ctx, &list, client.MatchingLabels{consts.ManagedByLabel: consts.ManagedByValue}); err != nil {
		return nil, err
	}
	out := map[string]*offv1beta1.NamespaceMap{}
	for i := range list.Items {
		m := &list.Items[i]
		provider, ok := consts.ClusterIDOfTenantNamespace(m.Namespace)
		if ok && isLocalMap(m) && client.ObjectKeyFromObject(m) == consts.NamespaceMapKey(provider) {
			out[provider] = m
		}
	}
	return out, nil
}

// virtualNodes lists the Nodes standing for peered clusters.
func (r *NamespaceOffloadingReconciler) virtualNodes(ctx context.Context) ([]corev1.Node, error) {
	var list corev1.NodeList
	if err := r.Client.List(ctx, &list, client.MatchingLabels{consts.TypeLabel: consts.TypeVirtualNode}); err != nil {
		return nil, err
	}
	return list.Items, nil
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
