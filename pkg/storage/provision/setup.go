package provision

import (
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Controller provisions and deletes the volumes of one provisioner.
type Controller struct {
	// Name names the controllers ("<Name>-claims", "<Name>-volumes").
	Name string
	// ProvisionerName is the classes' provisioner: the PVCs of their
	// classes are provisioned, and the PVs marked with it deleted.
	ProvisionerName string
	Provisioner     Provisioner
	// Workers is how many PVCs, and how many PVs, are worked on at once.
	Workers int
}

// Backoff of a PVC or PV whose work failed: from a fraction of a second,
// as a volume made in the background is often ready within seconds,
// doubling up to minutes, so that a volume that waits on something slow
// (another cluster, a cordoned node) does not wait much longer than it.
const (
	firstRetry = 250 * time.Millisecond
	lastRetry  = 5 * time.Minute
)

// SetupWithManager adds the controllers to mgr: they run when its
// controllers do (on the leader, when it elects one), with its client,
// cache and event recorder. The manager's cache holds every PVC, PV and
// StorageClass.
func (c *Controller) SetupWithManager(mgr ctrl.Manager) error {
	if c.Name == "" || c.ProvisionerName == "" || c.Provisioner == nil {
		return errors.New("a provisioning controller needs a name, a provisioner name and a provisioner")
	}
	recorder := mgr.GetEventRecorderFor(c.Name)
	options := func() controller.Options {
		return controller.Options{
			MaxConcurrentReconciles: max(c.Workers, 1),
			RateLimiter:             workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](firstRetry, lastRetry),
		}
	}
	err := ctrl.NewControllerManagedBy(mgr).Named(c.Name + "-claims").
		For(&corev1.PersistentVolumeClaim{}).
		WithOptions(options()).
		Complete(&claimReconciler{client: mgr.GetClient(), recorder: recorder, name: c.ProvisionerName, provisioner: c.Provisioner})
	if err != nil {
		return err
	}
	// Only this provisioner's PVs: the others are many and never ours.
	ours := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetAnnotations()[AnnProvisionedBy] == c.ProvisionerName })
	return ctrl.NewControllerManagedBy(mgr).Named(c.Name+"-volumes").
		For(&corev1.PersistentVolume{}, builder.WithPredicates(ours)).
		WithOptions(options()).
		Complete(&volumeReconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(), recorder: recorder, name: c.ProvisionerName, provisioner: c.Provisioner})
}
