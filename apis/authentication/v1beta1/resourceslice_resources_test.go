package v1beta1

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/liqo-go/liqo/pkg/consts"
)

func testSlice(authStatus, resStatus ResourceSliceConditionStatus, granted bool, annotations map[string]string) *ResourceSlice {
	s := &ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "pool", Annotations: annotations}}
	if authStatus != "" {
		s.Status.Conditions = append(s.Status.Conditions, ResourceSliceCondition{Type: ResourceSliceAuthentication, Status: authStatus})
	}
	if resStatus != "" {
		s.Status.Conditions = append(s.Status.Conditions, ResourceSliceCondition{Type: ResourceSliceResources, Status: resStatus})
	}
	if granted {
		s.Status.Resources = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
	}
	return s
}

func TestAccepted(t *testing.T) {
	ok, denied := ResourceSliceAccepted, ResourceSliceDenied
	cases := []struct {
		name string
		s    *ResourceSlice
		want bool
	}{
		{"both accepted, granted", testSlice(ok, ok, true, nil), true},
		{"no decision yet", testSlice("", "", false, nil), false},
		{"resources denied", testSlice(ok, denied, false, nil), false},
		{"authentication denied", testSlice(denied, ok, true, nil), false},
		{"accepted but nothing granted yet", testSlice(ok, ok, false, nil), false},
	}
	for _, c := range cases {
		if got := c.s.Accepted(); got != c.want {
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
		if got := testSlice("", "", false, c.annotations).WantsVirtualNode(); got != c.want {
			t.Errorf("annotations %v: WantsVirtualNode = %v, want %v", c.annotations, got, c.want)
		}
	}
}
