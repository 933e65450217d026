package provision

import (
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// Annotations the PV controller, the scheduler and provisioners share.
const (
	// AnnStorageProvisioner is where the PV controller names the
	// provisioner it expects to provision a PVC (the class's, or the CSI
	// driver an in-tree one migrated to); AnnBetaStorageProvisioner is
	// its older name, still set alongside.
	AnnStorageProvisioner     = "volume.kubernetes.io/storage-provisioner"
	AnnBetaStorageProvisioner = "volume.beta.kubernetes.io/storage-provisioner"
	// AnnSelectedNode is where the scheduler writes the node it picked
	// for the first pod of a PVC of a WaitForFirstConsumer class.
	AnnSelectedNode = "volume.kubernetes.io/selected-node"
	// AnnProvisionedBy marks a PV with the provisioner that made it: the
	// one to delete what backs it.
	AnnProvisionedBy = "pv.kubernetes.io/provisioned-by"
	// annBetaStorageClass names a PVC's class before spec.storageClassName
	// existed; the API server still honours it.
	annBetaStorageClass = "volume.beta.kubernetes.io/storage-class"
)

// PVName is the name of the PV of pvc: one per PVC, so that a retry or a
// second worker cannot make a second volume. Pure.
func PVName(pvc *corev1.PersistentVolumeClaim) string { return "pvc-" + string(pvc.UID) }

// ClassName is the StorageClass pvc asks for, "" for none. Pure.
func ClassName(pvc *corev1.PersistentVolumeClaim) string {
	if c, ok := pvc.Annotations[annBetaStorageClass]; ok {
		return c
	}
	if pvc.Spec.StorageClassName != nil {
		return *pvc.Spec.StorageClassName
	}
	return ""
}

// namedProvisioner is the provisioner the PV controller asked for on pvc,
// if it did. Pure.
func namedProvisioner(pvc *corev1.PersistentVolumeClaim) (string, bool) {
	if p, ok := pvc.Annotations[AnnStorageProvisioner]; ok {
		return p, true
	}
	p, ok := pvc.Annotations[AnnBetaStorageProvisioner]
	return p, ok
}

// Pending says whether pvc may be one to provision: unbound and not being
// deleted. Its class decides the rest (ClaimOptions). Pure.
func Pending(pvc *corev1.PersistentVolumeClaim) bool {
	return pvc.Spec.VolumeName == "" && pvc.DeletionTimestamp == nil && ClassName(pvc) != ""
}

// MaybeMine says whether a PVC whose class cannot be read is one to wait
// for: the PV controller named provisioner on it. Pure.
func MaybeMine(pvc *corev1.PersistentVolumeClaim, provisioner string) bool {
	p, ok := namedProvisioner(pvc)
	return ok && p == provisioner
}

// ClaimOptions says whether provisioner is to provision pvc now, of its
// class class, and with what. It is when pvc is Pending, the PV
// controller's annotation names provisioner (or, without it, the class
// does), and, for a class binding on the first consumer, the scheduler
// has selected a node. Pure.
func ClaimOptions(pvc *corev1.PersistentVolumeClaim, class *storagev1.StorageClass, provisioner string) (Options, bool) {
	if !Pending(pvc) || class == nil || class.Name != ClassName(pvc) {
		return Options{}, false
	}
	// The annotation, when set, is the PV controller's word: it may name
	// another provisioner than the class (CSI migration).
	named, ok := namedProvisioner(pvc)
	if !ok {
		named = class.Provisioner
	}
	if named != provisioner {
		return Options{}, false
	}
	node := pvc.Annotations[AnnSelectedNode]
	if class.VolumeBindingMode != nil && *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer && node == "" {
		return Options{}, false
	}
	return Options{PVName: PVName(pvc), PVC: pvc, StorageClass: class, SelectedNodeName: node, Parameters: class.Parameters}, true
}
