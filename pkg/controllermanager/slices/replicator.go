package slices

import (
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager/replicator"
	"github.com/liqo-go/liqo/pkg/remotecluster"
)

// ReplicatorReconciler keeps, for each of the consumer's ResourceSlices, a
// replica in its tenant namespace on the provider, and copies the provider's
// decision back into the local status.
type ReplicatorReconciler struct {
	Client    client.Client
	ClusterID string
	// Remotes reaches the providers.
	Remotes *remotecluster.Registry
}

// SetupWithManager registers the generic replicator for ResourceSlices.
func (r *ReplicatorReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return (&replicator.Reconciler[*authv1beta1.ResourceSlice]{Client: r.Client, ClusterID: r.ClusterID, Remotes: r.Remotes,
		Kind: ReplicatedKind(r.ClusterID)}).SetupWithManager(mgr)
}

// ReplicatedKind says how the slices of consumer clusterID are replicated:
// the request goes out without the CSR (the provider has the Tenant's), the
// decision comes back with the annotation that vouches for it.
func ReplicatedKind(clusterID string) replicator.Kind[*authv1beta1.ResourceSlice] {
	return replicator.Kind[*authv1beta1.ResourceSlice]{
		Name:    "ResourceSlice",
		New:     func() *authv1beta1.ResourceSlice { return &authv1beta1.ResourceSlice{} },
		NewList: func() client.ObjectList { return &authv1beta1.ResourceSliceList{} },
		Mine: func(s *authv1beta1.ResourceSlice) bool {
			return s.Labels[consts.ReplicationLabel] == "" && s.Spec.ConsumerClusterID != nil && string(*s.Spec.ConsumerClusterID) == clusterID
		},
		Forge: func(local *authv1beta1.ResourceSlice) *authv1beta1.ResourceSlice {
			replica := &authv1beta1.ResourceSlice{Spec: *local.Spec.DeepCopy()}
			replica.Spec.CSR = nil
			return replica
		},
		SyncSpec: func(local, replica *authv1beta1.ResourceSlice) bool {
			if equality.Semantic.DeepEqual(replica.Spec.Resources, local.Spec.Resources) && replica.Spec.Class == local.Spec.Class {
				return false
			}
			replica.Spec.Resources, replica.Spec.Class = local.Spec.Resources, local.Spec.Class
			return true
		},
		SyncStatus: func(replica, local *authv1beta1.ResourceSlice) bool {
			status := *replica.Status.DeepCopy()
			// The provider's fit summary places the consumer's pods: one
			// it could not have made is dropped, not trusted.
			if status.Fit != nil && status.Fit.Validate() != nil {
				status.Fit = nil
			}
			if equality.Semantic.DeepEqual(status, local.Status) {
				return false
			}
			local.Status = status
			return true
		},
		// The decision mark follows the status it vouches for.
		SyncMeta: func(replica, local *authv1beta1.ResourceSlice) bool {
			decided := replica.Annotations[consts.DecidedAnnotation]
			if local.Annotations[consts.DecidedAnnotation] == decided {
				return false
			}
			metav1.SetMetaDataAnnotation(&local.ObjectMeta, consts.DecidedAnnotation, decided)
			return true
		},
	}
}
