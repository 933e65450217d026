package provision

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// volumeReconciler deletes the Released PVs of its provisioner, and what
// backs them.
type volumeReconciler struct {
	client client.Client
	// reader reads the API server: the PV is read again there before
	// its volume goes, as that cannot be undone.
	reader      client.Reader
	recorder    record.EventRecorder
	name        string
	provisioner Provisioner
}

func (r *volumeReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var pv corev1.PersistentVolume
	if err := r.client.Get(ctx, req.NamespacedName, &pv); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !ShouldDelete(&pv, r.name) {
		return ctrl.Result{}, nil
	}
	if err := r.reader.Get(ctx, req.NamespacedName, &pv); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !ShouldDelete(&pv, r.name) {
		return ctrl.Result{}, nil
	}
	if err := r.provisioner.Delete(ctx, &pv); err != nil {
		var ignored *IgnoredError
		if errors.As(err, &ignored) {
			ctrl.LoggerFrom(ctx).V(1).Info("deletion ignored", "reason", ignored.Reason)
			return ctrl.Result{}, nil
		}
		r.recorder.Event(&pv, corev1.EventTypeWarning, "VolumeFailedDelete", err.Error())
		return ctrl.Result{}, fmt.Errorf("deleting the volume of PV %s: %w", pv.Name, err)
	}
	// This PV, not one made again under its name meanwhile.
	if err := r.client.Delete(ctx, &pv, client.Preconditions{UID: &pv.UID}); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(fmt.Errorf("deleting PV %s: %w", pv.Name, err))
	}
	return ctrl.Result{}, nil
}
