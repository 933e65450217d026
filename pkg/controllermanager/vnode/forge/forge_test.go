package forge

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

func slice(authStatus, resStatus authv1beta1.ResourceSliceConditionStatus, granted bool, annotations map[string]string) *authv1beta1.ResourceSlice {
	s := &authv1beta1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "pool", Annotations: annotations}}
	if authStatus != "" {
		s.Status.Conditions = append(s.Status.Conditions, authv1beta1.ResourceSliceCondition{Type: authv1beta1.ResourceSliceAuthentication, Status: authStatus})
	}
	if resStatus != "" {
		s.Status.Conditions = append(s.Status.Conditions, authv1beta1.ResourceSliceCondition{Type: authv1beta1.ResourceSliceResources, Status: resStatus})
	}
	if granted {
		s.Status.Resources = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
	}
	return s
}

func TestAccepted(t *testing.T) {
	ok, denied := authv1beta1.ResourceSliceAccepted, authv1beta1.ResourceSliceDenied
	cases := []struct {
		name string
		s    *authv1beta1.ResourceSlice
		want bool
	}{
		{"both accepted, granted", slice(ok, ok, true, nil), true},
		{"no decision yet", slice("", "", false, nil), false},
		{"resources denied", slice(ok, denied, false, nil), false},
		{"authentication denied", slice(denied, ok, true, nil), false},
		{"accepted but nothing granted yet", slice(ok, ok, false, nil), false},
	}
	for _, c := range cases {
		if got := Accepted(c.s); got != c.want {
			t.Errorf("%s: Accepted = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestWantsVirtualNode(t *testing.T) {
	for _, c := range []struct {
		annotations map[string]string
		want        bool
	}{
		{nil, true},
		{map[string]string{consts.CreateVirtualNodeAnnotation: "true"}, true},
		{map[string]string{consts.CreateVirtualNodeAnnotation: "false"}, false},
	} {
		if got := WantsVirtualNode(slice("", "", false, c.annotations)); got != c.want {
			t.Errorf("annotations %v: WantsVirtualNode = %v, want %v", c.annotations, got, c.want)
		}
	}
}

func TestVirtualNodeFromSliceKeepsTheRest(t *testing.T) {
	s := slice(authv1beta1.ResourceSliceAccepted, authv1beta1.ResourceSliceAccepted, true, nil)
	s.Status.NodeLabels = map[string]string{"region": "north"}
	taints := []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}
	vn := &offv1beta1.VirtualNode{Spec: offv1beta1.VirtualNodeSpec{Taints: taints}}
	VirtualNodeFromSlice(vn, s, "milan")
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
