package v1beta1

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

func TestSetFromSliceKeepsTheRest(t *testing.T) {
	s := &authv1beta1.ResourceSlice{Status: authv1beta1.ResourceSliceStatus{
		Resources:  corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
		NodeLabels: map[string]string{"region": "north"},
	}}
	taints := []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}
	vn := &VirtualNode{Spec: VirtualNodeSpec{Taints: taints}}
	vn.SetFromSlice(s, "milan")
	if string(vn.Spec.ClusterID) != "milan" || vn.Labels[consts.RemoteClusterIDLabel] != "milan" || vn.Spec.CreateNode == nil || !*vn.Spec.CreateNode {
		t.Errorf("not a virtual node of milan: %+v", vn)
	}
	if vn.Spec.KubeconfigSecretRef == nil || vn.Spec.KubeconfigSecretRef.Name != consts.KubeconfigSecretName(consts.IdentityName("milan")) {
		t.Errorf("credentials %v, want the Identity's", vn.Spec.KubeconfigSecretRef)
	}
	if q := vn.Spec.ResourceQuota.Hard[corev1.ResourceCPU]; q.String() != "2" || vn.Spec.Labels["region"] != "north" {
		t.Errorf("capacity %v labels %v, want the slice's", vn.Spec.ResourceQuota.Hard, vn.Spec.Labels)
	}
	if len(vn.Spec.Taints) != 1 {
		t.Errorf("taints %v: the forge must leave them", vn.Spec.Taints)
	}
}
