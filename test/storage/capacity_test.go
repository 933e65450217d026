package storage

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/test/harness"
	"github.com/liqo-go/liqo/test/realpods"
)

// TestRemoteCapacity: a 10Mi PVC whose remote class (milan's coarse)
// rounds sizes up to 64Mi. milan's provisioner makes a 64Mi PV; once
// milan's PVC is bound, the local PVC shows Bound with 64Mi, and so does
// its PV, and an Event says so.
func TestRemoteCapacity(t *testing.T) {
	ctx := realpods.Timeout(t, 5*time.Minute)
	peer(ctx, t)
	ns := realpods.Namespace(ctx, t, rome, "capacity")
	if out, err := run(ctx, "offload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"], "--pod-offloading-strategy", "Remote", "--timeout", "2m"); err != nil {
		t.Fatalf("offload: %v\n%s", err, out)
	}
	cs := rome.Client()
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: ns,
		Annotations: map[string]string{consts.RemoteStorageClassAnnotation: coarseClassName}}, Spec: liqoClaim()}
	requested := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, userOf(ns), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	realpods.RunningPods(ctx, t, rome, ns, "app=user", 1)

	// What milan made: a PV bigger than the request, of the coarse class.
	remote, err := milan.Client().CoreV1().PersistentVolumeClaims(ns+"-rome").Get(ctx, "data", metav1.GetOptions{})
	if err != nil || remote.Status.Phase != corev1.ClaimBound || ptr.Deref(remote.Spec.StorageClassName, "") != coarseClassName {
		t.Fatalf("milan's PVC: %v, %v; want it Bound, of class %s", remote, err, coarseClassName)
	}
	remotePV, err := milan.Client().CoreV1().PersistentVolumes().Get(ctx, remote.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	milanSize := remotePV.Spec.Capacity[corev1.ResourceStorage]
	if milanSize.Cmp(resource.MustParse(coarseUnit)) != 0 || milanSize.Cmp(requested) <= 0 {
		t.Fatalf("milan's PV has %s for a request of %s; want %s", milanSize.String(), requested.String(), coarseUnit)
	}

	// What rome shows.
	var shown string
	harness.Eventually(ctx, t, "the local PVC and PV showing milan's "+milanSize.String(), func() (bool, error) {
		local, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, local.Spec.VolumeName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pvcSize, pvSize := local.Status.Capacity[corev1.ResourceStorage], pv.Spec.Capacity[corev1.ResourceStorage]
		shown = fmt.Sprintf("PVC %s %s, PV %s", local.Status.Phase, pvcSize.String(), pvSize.String())
		return local.Status.Phase == corev1.ClaimBound && pvcSize.Cmp(milanSize) == 0 && pvSize.Cmp(milanSize) == 0, nil
	})
	t.Logf("rome shows %s", shown)
	harness.Eventually(ctx, t, "a RemoteCapacity Event on the local PVC", func() (bool, error) {
		evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=PersistentVolumeClaim,involvedObject.name=data,reason=RemoteCapacity"})
		return err == nil && len(evs.Items) > 0, err
	})
}
