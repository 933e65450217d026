package slices

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager/remotes"
)

// ReplicatorReconciler keeps, for each of the consumer's ResourceSlices, a
// replica in its tenant namespace on the provider, and copies the provider's
// decision back into the local status.
type ReplicatorReconciler struct {
	Client    client.Client
	ClusterID string
	Recorder  record.EventRecorder
	pool      *remotes.Pool
}

// Reconcile pushes the spec out and pulls the status in.
func (r *ReplicatorReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	provider, ok := consts.ClusterIDOfTenantNamespace(req.Namespace)
	if !ok {
		return ctrl.Result{}, nil
	}
	var local authv1beta1.ResourceSlice
	err := r.Client.Get(ctx, req.NamespacedName, &local)
	if apierrors.IsNotFound(err) || err == nil && !local.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.deleteRemote(ctx, provider, req.Name)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	remote, remoteNS, err := r.pool.Client(ctx, provider)
	if err != nil {
		// The Identity is not ready yet: its update requeues us.
		ctrl.LoggerFrom(ctx).Info("provider not reachable yet", "reason", err.Error())
		return ctrl.Result{}, nil
	}

	var replica authv1beta1.ResourceSlice
	err = remote.Get(ctx, types.NamespacedName{Namespace: remoteNS, Name: local.Name}, &replica)
	switch {
	case apierrors.IsNotFound(err):
		replica = authv1beta1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: local.Name, Namespace: remoteNS,
			Labels: replicaLabels(r.ClusterID)}, Spec: *local.Spec.DeepCopy()}
		replica.Spec.CSR = nil
		if err := remote.Create(ctx, &replica); err != nil {
			return ctrl.Result{}, err
		}
		r.Recorder.Eventf(&local, "Normal", "Replicated", "ResourceSlice sent to provider %s", provider)
	case err != nil:
		return ctrl.Result{}, err
	case replica.Labels[consts.OriginClusterIDLabel] != r.ClusterID:
		r.Recorder.Eventf(&local, "Warning", "NameConflict",
			"provider %s already has a ResourceSlice %s/%s that this cluster did not create; leaving it alone", provider, remoteNS, local.Name)
		return ctrl.Result{}, nil
	case !equality.Semantic.DeepEqual(replica.Spec.Resources, local.Spec.Resources) || replica.Spec.Class != local.Spec.Class:
		replica.Spec.Resources, replica.Spec.Class = local.Spec.Resources, local.Spec.Class
		if err := remote.Update(ctx, &replica); err != nil {
			return ctrl.Result{}, err
		}
	}
	if !equality.Semantic.DeepEqual(replica.Status, local.Status) {
		local.Status = replica.Status
		if err := r.Client.Status().Update(ctx, &local); err != nil {
			return ctrl.Result{}, err
		}
	}
	// The decision mark follows the status it vouches for.
	if decided := replica.Annotations[DecidedAnnotation]; local.Annotations[DecidedAnnotation] != decided {
		patch := client.MergeFrom(local.DeepCopy())
		metav1.SetMetaDataAnnotation(&local.ObjectMeta, DecidedAnnotation, decided)
		return ctrl.Result{}, r.Client.Patch(ctx, &local, patch)
	}
	return ctrl.Result{}, nil
}

func replicaLabels(origin string) map[string]string {
	return map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.ReplicationLabel: "true",
		consts.OriginClusterIDLabel: origin}
}

// deleteRemote removes the provider's replica of a slice that is gone locally.
// If the provider can no longer be reached through an Identity, there is
// nothing this cluster may delete there: unpeer cleans up with the admin's
// credentials instead.
func (r *ReplicatorReconciler) deleteRemote(ctx context.Context, provider, name string) error {
	remote, remoteNS, err := r.pool.Client(ctx, provider)
	if err != nil {
		return nil
	}
	var replica authv1beta1.ResourceSlice
	if err := remote.Get(ctx, types.NamespacedName{Namespace: remoteNS, Name: name}, &replica); err != nil {
		return client.IgnoreNotFound(err)
	}
	if replica.Labels[consts.OriginClusterIDLabel] != r.ClusterID {
		return nil
	}
	return client.IgnoreNotFound(remote.Delete(ctx, &replica))
}

// SetupWithManager registers the controller, the remote watches and the
// Identity watch that wakes slices waiting for credentials.
func (r *ReplicatorReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.Recorder = mgr.GetEventRecorderFor("liqo-resourceslice")
	r.pool = remotes.NewPool(mgr.GetScheme(), mgr.GetClient(),
		func(provider string, o client.Object) types.NamespacedName {
			return types.NamespacedName{Namespace: consts.TenantNamespace(provider), Name: o.GetName()}
		}, &authv1beta1.ResourceSlice{})
	if err := mgr.Add(r.pool); err != nil {
		return err
	}
	mine := predicate.NewPredicateFuncs(func(o client.Object) bool {
		s, ok := o.(*authv1beta1.ResourceSlice)
		return ok && s.Labels[consts.ReplicationLabel] == "" && s.Spec.ConsumerClusterID != nil && string(*s.Spec.ConsumerClusterID) == r.ClusterID
	})
	return ctrl.NewControllerManagedBy(mgr).Named("resourceslice-replicator").
		For(&authv1beta1.ResourceSlice{}, builder.WithPredicates(mine)).
		WatchesRawSource(r.pool.Source()).
		Watches(&authv1beta1.Identity{}, handler.EnqueueRequestsFromMapFunc(slicesInNamespace(r.Client, false))).
		Complete(r)
}

// slicesInNamespace maps an object to the slices of its namespace: the
// consumer's own (replicated false) or the copies consumers made on this
// provider (replicated true).
func slicesInNamespace(c client.Reader, replicated bool) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		var list authv1beta1.ResourceSliceList
		if err := c.List(ctx, &list, client.InNamespace(o.GetNamespace())); err != nil {
			return nil
		}
		var out []reconcile.Request
		for _, s := range list.Items {
			if (s.Labels[consts.ReplicationLabel] == "true") == replicated {
				out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&s)})
			}
		}
		return out
	}
}
