package storage

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/liqo-go/liqo/pkg/testbed/hostpath"
	"github.com/liqo-go/liqo/test/harness"
	"github.com/liqo-go/liqo/test/realpods"
)

// TestClassOfferedLater: a StorageClass milan makes after the peering is
// offered to rome (its VirtualNode lists it) without anything else
// changing, and withdrawn once deleted.
func TestClassOfferedLater(t *testing.T) {
	ctx := realpods.Timeout(t, 5*time.Minute)
	peer(ctx, t)
	classes := milan.Client().StorageV1().StorageClasses()
	class := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "late"}, Provisioner: hostpath.ProvisionerName,
		ReclaimPolicy: ptr.To(corev1.PersistentVolumeReclaimDelete), VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer)}
	if _, err := classes.Create(ctx, class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = classes.Delete(context.Background(), "late", metav1.DeleteOptions{}) })
	offered := func() (bool, error) {
		out, err := realpods.Kubectl(ctx, rome, "get", "virtualnode", "-n", "liqo-tenant-milan", "milan", "-o", "jsonpath={.spec.storageClasses}")
		return strings.Contains(out, `"storageClassName":"late"`), err
	}
	harness.Eventually(ctx, t, "class late offered on the VirtualNode milan", offered)
	if err := classes.Delete(ctx, "late", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(ctx, t, "class late withdrawn from the VirtualNode milan", func() (bool, error) {
		ok, err := offered()
		return !ok && err == nil, err
	})
}
