package provision

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestNewVolume(t *testing.T) {
	pvc := claim("fast", nil)
	o, ok := ClaimOptions(pvc, class("fast", ours, storagev1.VolumeBindingImmediate), ours)
	if !ok {
		t.Fatal("the claim is not to provision")
	}
	made := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "whatever", Annotations: map[string]string{"keep": "me"}},
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain}}
	pv := NewVolume(made, o, ours)
	ref := pv.Spec.ClaimRef
	if pv.Name != "pvc-u1" || pv.Annotations[AnnProvisionedBy] != ours || pv.Annotations["keep"] != "me" || pv.Spec.StorageClassName != "fast" ||
		pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimRetain {
		t.Errorf("PV %+v", pv)
	}
	if ref == nil || ref.Kind != "PersistentVolumeClaim" || ref.APIVersion != "v1" || ref.Namespace != "shop" || ref.Name != "data" || ref.UID != "u1" {
		t.Errorf("claim reference %+v", ref)
	}
	if made.Name != "whatever" || made.Spec.ClaimRef != nil || len(made.Annotations) != 1 {
		t.Errorf("the provisioner's PV was changed: %+v", made)
	}
}

func TestShouldDelete(t *testing.T) {
	pv := func(by string, phase corev1.PersistentVolumePhase, reclaim corev1.PersistentVolumeReclaimPolicy) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pvc-u1", Annotations: map[string]string{AnnProvisionedBy: by}},
			Spec: corev1.PersistentVolumeSpec{PersistentVolumeReclaimPolicy: reclaim}, Status: corev1.PersistentVolumeStatus{Phase: phase}}
	}
	deleting := pv(ours, corev1.VolumeReleased, corev1.PersistentVolumeReclaimDelete)
	deleting.DeletionTimestamp = ptr.To(metav1.Now())
	for _, tc := range []struct {
		name string
		pv   *corev1.PersistentVolume
		want bool
	}{
		{"ours, Released, Delete", pv(ours, corev1.VolumeReleased, corev1.PersistentVolumeReclaimDelete), true},
		{"another's", pv("example.com/other", corev1.VolumeReleased, corev1.PersistentVolumeReclaimDelete), false},
		{"unmarked", pv("", corev1.VolumeReleased, corev1.PersistentVolumeReclaimDelete), false},
		{"bound", pv(ours, corev1.VolumeBound, corev1.PersistentVolumeReclaimDelete), false},
		{"failed", pv(ours, corev1.VolumeFailed, corev1.PersistentVolumeReclaimDelete), false},
		{"Retain", pv(ours, corev1.VolumeReleased, corev1.PersistentVolumeReclaimRetain), false},
		{"being deleted", deleting, false},
	} {
		if got := ShouldDelete(tc.pv, ours); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
