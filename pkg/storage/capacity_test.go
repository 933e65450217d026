package storage

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/liqo-go/liqo/pkg/consts"
)

func TestRemoteCapacity(t *testing.T) {
	storage := func(q string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(q)}
	}
	base := func() (*corev1.PersistentVolume, *corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaim) {
		local := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "shop", UID: "u1"},
			Spec:       corev1.PersistentVolumeClaimSpec{VolumeName: "pvc-u1", Resources: corev1.VolumeResourceRequirements{Requests: storage("10Mi")}},
		}
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: "pvc-u1", Annotations: map[string]string{consts.RemoteClusterAnnotation: "milan", consts.RemoteNamespaceAnnotation: "shop-rome"}},
			Spec:       corev1.PersistentVolumeSpec{Capacity: storage("10Mi"), ClaimRef: &corev1.ObjectReference{Namespace: "shop", Name: "data", UID: "u1"}},
		}
		remote := &corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "shop-rome"},
			Status:     corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, Capacity: storage("64Mi")},
		}
		return pv, local, remote
	}
	for _, tc := range []struct {
		name   string
		change func(pv *corev1.PersistentVolume, local, remote *corev1.PersistentVolumeClaim)
		want   string // "" for nothing to show
		refuse bool
	}{
		{name: "bound bigger", want: "64Mi"},
		{name: "bound as asked", change: func(_ *corev1.PersistentVolume, _, r *corev1.PersistentVolumeClaim) {
			r.Status.Capacity = storage("10Mi")
		}, want: "10Mi"},
		{name: "remote pending", change: func(_ *corev1.PersistentVolume, _, r *corev1.PersistentVolumeClaim) {
			r.Status.Phase = corev1.ClaimPending
		}},
		{name: "no capacity reported", change: func(_ *corev1.PersistentVolume, _, r *corev1.PersistentVolumeClaim) {
			r.Status.Capacity = nil
		}},
		{name: "another provider's volume", change: func(pv *corev1.PersistentVolume, _, _ *corev1.PersistentVolumeClaim) {
			pv.Annotations[consts.RemoteClusterAnnotation] = "naples"
		}},
		{name: "a local volume", change: func(pv *corev1.PersistentVolume, _, _ *corev1.PersistentVolumeClaim) {
			pv.Annotations = map[string]string{consts.RealPVCAnnotation: "liqo-storage/u1"}
		}},
		{name: "another twin", change: func(_ *corev1.PersistentVolume, _, r *corev1.PersistentVolumeClaim) {
			r.Namespace = "other-rome"
		}},
		{name: "PV of a former PVC of the name", change: func(pv *corev1.PersistentVolume, _, _ *corev1.PersistentVolumeClaim) {
			pv.Spec.ClaimRef.UID = "u0"
		}},
		{name: "another remote PVC", change: func(_ *corev1.PersistentVolume, _, r *corev1.PersistentVolumeClaim) {
			r.Name = "logs"
		}},
		{name: "smaller than asked", change: func(_ *corev1.PersistentVolume, _, r *corev1.PersistentVolumeClaim) {
			r.Status.Capacity = storage("1Mi")
		}, refuse: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pv, local, remote := base()
			if tc.change != nil {
				tc.change(pv, local, remote)
			}
			q, ok, err := RemoteCapacity(pv, local, remote, "milan", "shop-rome")
			var refusal *CapacityRefusal
			switch {
			case tc.refuse:
				if !errors.As(err, &refusal) || ok || refusal.Reported.String() != "1Mi" || refusal.Requested.String() != "10Mi" {
					t.Errorf("got %v, %v, %v; want a refusal of 1Mi for 10Mi", q.String(), ok, err)
				}
			case err != nil:
				t.Errorf("error %v", err)
			case tc.want == "" && ok:
				t.Errorf("shows %s; want nothing", q.String())
			case tc.want != "" && (!ok || q.String() != tc.want):
				t.Errorf("shows %s (%v); want %s", q.String(), ok, tc.want)
			}
		})
	}
}
