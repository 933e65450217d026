package provision

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// claimReconciler provisions the PVs of the PVCs of its provisioner.
type claimReconciler struct {
	client      client.Client
	recorder    record.EventRecorder
	name        string
	provisioner Provisioner
}

func (r *claimReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var pvc corev1.PersistentVolumeClaim
	if err := r.client.Get(ctx, req.NamespacedName, &pvc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !Pending(&pvc) {
		return ctrl.Result{}, nil
	}
	var class storagev1.StorageClass
	if err := r.client.Get(ctx, types.NamespacedName{Name: ClassName(&pvc)}, &class); err != nil {
		if apierrors.IsNotFound(err) && !MaybeMine(&pvc, r.name) {
			// Another provisioner's, or no one's: a PVC of a class
			// that does not exist stays Pending.
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("reading the StorageClass of PVC %s: %w", req, err)
	}
	o, ok := ClaimOptions(&pvc, &class, r.name)
	if !ok {
		return ctrl.Result{}, nil
	}
	// A PV saved earlier (the cache may not show the binding yet): the
	// PV controller binds the two.
	switch err := r.client.Get(ctx, types.NamespacedName{Name: o.PVName}, &corev1.PersistentVolume{}); {
	case err == nil:
		return ctrl.Result{}, nil
	case !apierrors.IsNotFound(err):
		return ctrl.Result{}, err
	}

	r.recorder.Eventf(&pvc, corev1.EventTypeNormal, "Provisioning", "External provisioner is provisioning volume for claim %q", req)
	pv, state, err := r.provisioner.Provision(ctx, o)
	if err == nil && pv == nil {
		err, state = errors.New("the provisioner returned no PV"), NoChange
	}
	if err != nil {
		var ignored *IgnoredError
		if errors.As(err, &ignored) {
			ctrl.LoggerFrom(ctx).V(1).Info("provisioning ignored", "reason", ignored.Reason)
			return ctrl.Result{}, nil
		}
		r.recorder.Eventf(&pvc, corev1.EventTypeWarning, "ProvisioningFailed", "failed to provision volume with StorageClass %q: %v", class.Name, err)
		if state == Finished && o.SelectedNodeName != "" {
			// The node may be why: let the scheduler pick again.
			if uerr := r.unselectNode(ctx, &pvc); uerr != nil {
				return ctrl.Result{}, errors.Join(err, uerr)
			}
		}
		return ctrl.Result{}, err
	}
	pv = NewVolume(pv, o, r.name)
	if err := r.client.Create(ctx, pv); err != nil && !apierrors.IsAlreadyExists(err) {
		r.recorder.Eventf(&pvc, corev1.EventTypeWarning, "ProvisioningFailed", "saving the PV %s: %v", pv.Name, err)
		return ctrl.Result{}, fmt.Errorf("saving the PV %s: %w", pv.Name, err)
	}
	r.recorder.Eventf(&pvc, corev1.EventTypeNormal, "ProvisioningSucceeded", "Successfully provisioned volume %s", pv.Name)
	return ctrl.Result{}, nil
}

// unselectNode removes the PVC's selected node, which the scheduler then
// picks again for its pod.
func (r *claimReconciler) unselectNode(ctx context.Context, pvc *corev1.PersistentVolumeClaim) error {
	patch := client.MergeFrom(pvc.DeepCopy())
	pvc = pvc.DeepCopy()
	delete(pvc.Annotations, AnnSelectedNode)
	if err := r.client.Patch(ctx, pvc, patch); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("removing the selected node of PVC %s/%s: %w", pvc.Namespace, pvc.Name, err))
	}
	return nil
}
