package offloading

import (
	"maps"

	"k8s.io/apimachinery/pkg/api/equality"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager/replicator"
	"github.com/liqo-go/liqo/pkg/remotecluster"
)

// namespaceMapLabels are the labels of the consumer's NamespaceMap for provider.
func namespaceMapLabels(provider string) map[string]string {
	return map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.RemoteClusterIDLabel: provider}
}

// isLocalMap tells the consumer's own maps (in a tenant namespace, not a
// replica a consumer made on this cluster) from the rest.
func isLocalMap(m *offv1beta1.NamespaceMap) bool {
	_, ok := consts.ClusterIDOfTenantNamespace(m.Namespace)
	return ok && m.Labels[consts.ReplicationLabel] == ""
}

// MapReplicator copies the consumer's NamespaceMaps to their providers and
// the providers' currentMapping back.
type MapReplicator struct {
	Client    client.Client
	ClusterID string
	// Remotes reaches the providers.
	Remotes *remotecluster.Registry
}

// SetupWithManager registers the generic replicator for NamespaceMaps.
func (r *MapReplicator) SetupWithManager(mgr ctrl.Manager) error {
	return (&replicator.Reconciler[*offv1beta1.NamespaceMap]{Client: r.Client, ClusterID: r.ClusterID, Remotes: r.Remotes,
		Kind: ReplicatedMapKind()}).SetupWithManager(mgr)
}

// ReplicatedMapKind says how NamespaceMaps are replicated: the desired
// mapping goes out, the whole status comes back.
func ReplicatedMapKind() replicator.Kind[*offv1beta1.NamespaceMap] {
	return replicator.Kind[*offv1beta1.NamespaceMap]{
		Name:    "NamespaceMap",
		New:     func() *offv1beta1.NamespaceMap { return &offv1beta1.NamespaceMap{} },
		NewList: func() client.ObjectList { return &offv1beta1.NamespaceMapList{} },
		Mine:    isLocalMap,
		Forge: func(local *offv1beta1.NamespaceMap) *offv1beta1.NamespaceMap {
			return &offv1beta1.NamespaceMap{Spec: offv1beta1.NamespaceMapSpec{DesiredMapping: maps.Clone(local.Spec.DesiredMapping)}}
		},
		SyncSpec: func(local, replica *offv1beta1.NamespaceMap) bool {
			if equality.Semantic.DeepEqual(local.Spec.DesiredMapping, replica.Spec.DesiredMapping) {
				return false
			}
			replica.Spec.DesiredMapping = maps.Clone(local.Spec.DesiredMapping)
			return true
		},
		SyncStatus: func(replica, local *offv1beta1.NamespaceMap) bool {
			if equality.Semantic.DeepEqual(replica.Status, local.Status) {
				return false
			}
			local.Status = *replica.Status.DeepCopy()
			return true
		},
	}
}
