package storage

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/storage/provision"
)

func TestRemotePVC(t *testing.T) {
	local := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data-db-0", Namespace: "shop", Labels: map[string]string{"app": "db"},
			Annotations: map[string]string{consts.RemoteStorageClassAnnotation: "fast", provision.AnnSelectedNode: "milan"}},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: ptr.To("liqo"), VolumeName: "pvc-x",
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	got := RemotePVC(local, "shop-rome", "rome")
	if got.Name != "data-db-0" || got.Namespace != "shop-rome" || ptr.Deref(got.Spec.StorageClassName, "") != "fast" ||
		got.Spec.VolumeName != "" || len(got.Annotations) != 0 || got.Labels[consts.ManagedByLabel] != consts.ManagedByValue || got.Labels[consts.OriginClusterIDLabel] != "rome" || got.Labels["app"] != "" {
		t.Errorf("RemotePVC: %+v", got)
	}
	if q := got.Spec.Resources.Requests[corev1.ResourceStorage]; q.String() != "1Gi" {
		t.Errorf("size %s", q.String())
	}
	delete(local.Annotations, consts.RemoteStorageClassAnnotation)
	if got := RemotePVC(local, "shop-rome", "rome"); got.Spec.StorageClassName != nil {
		t.Errorf("without the annotation the class is %q, want the provider's default", *got.Spec.StorageClassName)
	}
}

func TestCheckRemoteClass(t *testing.T) {
	offered := []corev1beta1.StorageType{{StorageClassName: "standard", Default: true}, {StorageClassName: "fast"}}
	pvc := func(class string) *corev1.PersistentVolumeClaim {
		p := &corev1.PersistentVolumeClaim{}
		if class != "" {
			p.Annotations = map[string]string{consts.RemoteStorageClassAnnotation: class}
		}
		return p
	}
	for _, ok := range []*corev1.PersistentVolumeClaim{pvc(""), pvc("fast"), pvc("standard")} {
		if err := CheckRemoteClass(ok, "milan", offered); err != nil {
			t.Errorf("%v: %v", ok.Annotations, err)
		}
	}
	err := CheckRemoteClass(pvc("gold"), "milan", offered)
	if err == nil || !strings.Contains(err.Error(), `no storage class "gold"`) || !strings.Contains(err.Error(), "standard (default), fast") {
		t.Errorf("an unknown class: %v", err)
	}
	if err := CheckRemoteClass(pvc("gold"), "milan", nil); err != nil {
		t.Errorf("a provider that advertised nothing: %v", err)
	}
}
