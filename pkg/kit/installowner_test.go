package kit

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestInstallOwner(t *testing.T) {
	var none InstallOwner
	obj := &corev1.Secret{}
	if none.Own(obj) || len(obj.OwnerReferences) > 0 {
		t.Fatalf("the zero InstallOwner owned %v", obj.OwnerReferences)
	}

	cs := fake.NewClientset(&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "liqo-controller-manager", UID: "u1"}})
	if _, err := NewInstallOwner(context.Background(), cs, "missing"); err == nil {
		t.Fatal("a missing ClusterRole gave no error")
	}
	o, err := NewInstallOwner(context.Background(), cs, "liqo-controller-manager")
	if err != nil {
		t.Fatal(err)
	}
	obj.OwnerReferences = []metav1.OwnerReference{{Kind: "Other", Name: "x", UID: "u0"}}
	if !o.Own(obj) || o.Own(obj) {
		t.Fatal("Own should change the object once")
	}
	if len(obj.OwnerReferences) != 2 || obj.OwnerReferences[1].UID != "u1" || obj.OwnerReferences[1].Kind != "ClusterRole" {
		t.Fatalf("owner references: %+v", obj.OwnerReferences)
	}
}
