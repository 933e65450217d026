package provision

import (
	corev1 "k8s.io/api/core/v1"
)

// NewVolume is pv, as a Provisioner returned it for o, made the PV of
// o.PVC: named o.PVName, pre-bound to the PVC (so that the PV controller
// binds the two and no other claim takes it), of its class, and marked as
// provisioner's. It changes a copy. Pure.
func NewVolume(pv *corev1.PersistentVolume, o Options, provisioner string) *corev1.PersistentVolume {
	pv = pv.DeepCopy()
	pv.Name = o.PVName
	if pv.Annotations == nil {
		pv.Annotations = map[string]string{}
	}
	pv.Annotations[AnnProvisionedBy] = provisioner
	pv.Spec.ClaimRef = &corev1.ObjectReference{
		Kind: "PersistentVolumeClaim", APIVersion: "v1",
		Namespace: o.PVC.Namespace, Name: o.PVC.Name, UID: o.PVC.UID,
	}
	pv.Spec.StorageClassName = o.StorageClass.Name
	return pv
}

// ShouldDelete says whether what backs pv is provisioner's to delete now:
// the PV is provisioner's, its claim is gone (Released) and its class
// said to delete the volume then. Pure.
func ShouldDelete(pv *corev1.PersistentVolume, provisioner string) bool {
	return pv.Annotations[AnnProvisionedBy] == provisioner &&
		pv.Status.Phase == corev1.VolumeReleased &&
		pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimDelete &&
		pv.DeletionTimestamp == nil
}
