package provision

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

const ours = "example.com/ours"

func class(name, provisioner string, mode storagev1.VolumeBindingMode) *storagev1.StorageClass {
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner,
		VolumeBindingMode: ptr.To(mode), Parameters: map[string]string{"k": "v"}}
}

func claim(className string, annotations map[string]string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "data", UID: "u1", Annotations: annotations},
		Spec:       corev1.PersistentVolumeClaimSpec{StorageClassName: ptr.To(className)},
	}
}

func TestClaimOptions(t *testing.T) {
	immediate := class("fast", ours, storagev1.VolumeBindingImmediate)
	late := class("late", ours, storagev1.VolumeBindingWaitForFirstConsumer)
	theirs := class("theirs", "example.com/other", storagev1.VolumeBindingImmediate)
	bound := claim("fast", nil)
	bound.Spec.VolumeName = "pv-1"
	deleting := claim("fast", nil)
	deleting.DeletionTimestamp = ptr.To(metav1.Now())
	noClass := claim("", nil)
	noClass.Spec.StorageClassName = nil
	for _, tc := range []struct {
		name  string
		pvc   *corev1.PersistentVolumeClaim
		class *storagev1.StorageClass
		want  bool
		node  string
	}{
		{name: "an Immediate class of ours", pvc: claim("fast", nil), class: immediate, want: true},
		{name: "the PV controller names us", pvc: claim("fast", map[string]string{AnnStorageProvisioner: ours}), class: immediate, want: true},
		{name: "the beta annotation names us", pvc: claim("fast", map[string]string{AnnBetaStorageProvisioner: ours}), class: immediate, want: true},
		{name: "the PV controller names another (migration)", pvc: claim("fast", map[string]string{AnnStorageProvisioner: "csi.example.com"}), class: immediate},
		{name: "the PV controller names us on a class of another", pvc: claim("theirs", map[string]string{AnnStorageProvisioner: ours}), class: theirs, want: true},
		{name: "another provisioner's class", pvc: claim("theirs", nil), class: theirs},
		{name: "first consumer, no node yet", pvc: claim("late", nil), class: late},
		{name: "first consumer, node selected", pvc: claim("late", map[string]string{AnnSelectedNode: "n1"}), class: late, want: true, node: "n1"},
		{name: "bound", pvc: bound, class: immediate},
		{name: "being deleted", pvc: deleting, class: immediate},
		{name: "no class", pvc: noClass, class: immediate},
		{name: "the class read is not the PVC's", pvc: claim("late", map[string]string{AnnSelectedNode: "n1"}), class: immediate},
		{name: "no class read", pvc: claim("fast", nil)},
		{name: "the beta class annotation wins", pvc: claim("theirs", map[string]string{annBetaStorageClass: "fast"}), class: immediate, want: true},
	} {
		o, ok := ClaimOptions(tc.pvc, tc.class, ours)
		if ok != tc.want {
			t.Errorf("%s: provision %v, want %v", tc.name, ok, tc.want)
			continue
		}
		if !ok {
			continue
		}
		if o.PVName != "pvc-u1" || o.PVC != tc.pvc || o.StorageClass != tc.class || o.SelectedNodeName != tc.node || o.Parameters["k"] != "v" {
			t.Errorf("%s: options %+v", tc.name, o)
		}
	}
}

func TestMaybeMine(t *testing.T) {
	if !MaybeMine(claim("gone", map[string]string{AnnStorageProvisioner: ours}), ours) {
		t.Error("a PVC the PV controller gave us, of a class not read: not ours")
	}
	if !MaybeMine(claim("gone", map[string]string{AnnBetaStorageProvisioner: ours}), ours) {
		t.Error("the beta annotation: not ours")
	}
	if MaybeMine(claim("gone", nil), ours) || MaybeMine(claim("gone", map[string]string{AnnStorageProvisioner: "x"}), ours) {
		t.Error("a PVC nothing gives us: ours")
	}
}
