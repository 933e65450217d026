package provision_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/storage/provision"
	"github.com/liqo-go/liqo/test/harness"
)

// The classes of the tests: the fake's, binding at once and on the first
// consumer, and another provisioner's.
const (
	immediateClass = "fake-immediate"
	lateClass      = "fake-late"
	otherClass     = "other"
)

// settle is how long a test watches for what must not happen, after a
// PVC created later than the one watched was provisioned: time enough for
// the controller to have acted on the first too.
const settle = 2 * time.Second

func setup(t *testing.T) (context.Context, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	for name, c := range map[string]struct {
		provisioner string
		mode        storagev1.VolumeBindingMode
	}{
		immediateClass: {provisionerName, storagev1.VolumeBindingImmediate},
		lateClass:      {provisionerName, storagev1.VolumeBindingWaitForFirstConsumer},
		otherClass:     {"example.com/other", storagev1.VolumeBindingImmediate},
	} {
		class := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: c.provisioner,
			ReclaimPolicy: ptr.To(corev1.PersistentVolumeReclaimDelete), VolumeBindingMode: ptr.To(c.mode)}
		if err := cl.Create(ctx, class); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	ns := strings.ToLower(strings.ReplaceAll(t.Name(), "_", "-"))
	if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	return ctx, ns
}

func create(ctx context.Context, t *testing.T, pvc *corev1.PersistentVolumeClaim) *corev1.PersistentVolumeClaim {
	t.Helper()
	if err := cl.Create(ctx, pvc); err != nil {
		t.Fatal(err)
	}
	return pvc
}

// bound waits until pvc is bound, to the PV the controller made for it,
// and returns that PV.
func bound(ctx context.Context, t *testing.T, pvc *corev1.PersistentVolumeClaim) *corev1.PersistentVolume {
	t.Helper()
	harness.Eventually(ctx, t, "PVC "+pvc.Name+" bound", func() (bool, error) {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(pvc), pvc); err != nil {
			return false, err
		}
		return pvc.Status.Phase == corev1.ClaimBound, fmt.Errorf("phase %q, volume %q", pvc.Status.Phase, pvc.Spec.VolumeName)
	})
	if want := provision.PVName(pvc); pvc.Spec.VolumeName != want {
		t.Fatalf("PVC %s bound to %s, want %s", pvc.Name, pvc.Spec.VolumeName, want)
	}
	var pv corev1.PersistentVolume
	if err := cl.Get(ctx, types.NamespacedName{Name: pvc.Spec.VolumeName}, &pv); err != nil {
		t.Fatal(err)
	}
	return &pv
}

// leftAlone checks, after settle, that nothing provisioned pvc: still
// Pending, no PV of its name, no Provision call.
func leftAlone(ctx context.Context, t *testing.T, pvc *corev1.PersistentVolumeClaim) {
	t.Helper()
	time.Sleep(settle)
	if err := cl.Get(ctx, client.ObjectKeyFromObject(pvc), pvc); err != nil {
		t.Fatal(err)
	}
	if pvc.Status.Phase != corev1.ClaimPending || pvc.Spec.VolumeName != "" {
		t.Errorf("PVC %s: phase %s, volume %q; want Pending, unbound", pvc.Name, pvc.Status.Phase, pvc.Spec.VolumeName)
	}
	if err := cl.Get(ctx, types.NamespacedName{Name: provision.PVName(pvc)}, &corev1.PersistentVolume{}); !apierrors.IsNotFound(err) {
		t.Errorf("PV %s of PVC %s: %v, want none", provision.PVName(pvc), pvc.Name, err)
	}
	if calls, _ := fake.calls(pvc, ""); len(calls) != 0 {
		t.Errorf("PVC %s was given to the provisioner %d times", pvc.Name, len(calls))
	}
}

// event waits for an Event of reason on obj whose message has text.
func event(ctx context.Context, t *testing.T, obj client.Object, reason, text string) {
	t.Helper()
	ns := obj.GetNamespace()
	if ns == "" {
		ns = metav1.NamespaceDefault // where cluster objects' Events go
	}
	harness.Eventually(ctx, t, fmt.Sprintf("Event %s on %s", reason, obj.GetName()), func() (bool, error) {
		var list corev1.EventList
		if err := cl.List(ctx, &list, client.InNamespace(ns),
			client.MatchingFields{"involvedObject.uid": string(obj.GetUID()), "reason": reason}); err != nil {
			return false, err
		}
		for _, e := range list.Items {
			if strings.Contains(e.Message, text) {
				return true, nil
			}
		}
		return false, fmt.Errorf("%d Events of the reason, none saying %q", len(list.Items), text)
	})
}

// TestProvisionAndDelete: a PVC of a class of ours gets a PV, made by the
// provisioner, bound to it; deleting the PVC releases the PV, whose
// volume the provisioner deletes before the PV goes.
func TestProvisionAndDelete(t *testing.T) {
	ctx, ns := setup(t)
	pvc := create(ctx, t, newClaim(ns, "data", immediateClass, nil))
	pv := bound(ctx, t, pvc)
	ref := pv.Spec.ClaimRef
	if pv.Annotations[provision.AnnProvisionedBy] != provisionerName || pv.Spec.StorageClassName != immediateClass ||
		ref == nil || ref.Namespace != ns || ref.Name != pvc.Name || ref.UID != pvc.UID {
		t.Errorf("PV: annotations %v, class %q, claim %+v", pv.Annotations, pv.Spec.StorageClassName, ref)
	}
	calls, _ := fake.calls(pvc, "")
	if len(calls) == 0 || calls[0].PVName != pv.Name || calls[0].StorageClass.Name != immediateClass || calls[0].SelectedNodeName != "" {
		t.Errorf("Provision calls: %+v", calls)
	}
	event(ctx, t, pvc, "ProvisioningSucceeded", pv.Name)

	if err := cl.Delete(ctx, pvc); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(ctx, t, "PV "+pv.Name+" deleted", func() (bool, error) {
		err := cl.Get(ctx, client.ObjectKeyFromObject(pv), pv)
		return apierrors.IsNotFound(err), fmt.Errorf("phase %q (%v)", pv.Status.Phase, err)
	})
	if _, deletes := fake.calls(pvc, pv.Name); deletes != 1 {
		t.Errorf("Delete called %d times for %s, want once", deletes, pv.Name)
	}
}

// TestWaitsForFirstConsumer: a PVC of a class binding on the first
// consumer is provisioned once the scheduler selected a node (the test
// does, as no pod uses it), on that node.
func TestWaitsForFirstConsumer(t *testing.T) {
	ctx, ns := setup(t)
	late := create(ctx, t, newClaim(ns, "late", lateClass, nil))
	bound(ctx, t, create(ctx, t, newClaim(ns, "barrier", immediateClass, nil)))
	leftAlone(ctx, t, late)

	var nodes corev1.NodeList
	if err := cl.List(ctx, &nodes); err != nil || len(nodes.Items) == 0 {
		t.Fatalf("nodes: %v, %v", nodes.Items, err)
	}
	node := nodes.Items[0].Name
	patch := client.MergeFrom(late.DeepCopy())
	late.Annotations = map[string]string{provision.AnnSelectedNode: node}
	if err := cl.Patch(ctx, late, patch); err != nil {
		t.Fatal(err)
	}
	bound(ctx, t, late)
	if calls, _ := fake.calls(late, ""); len(calls) == 0 || calls[len(calls)-1].SelectedNodeName != node {
		t.Errorf("Provision calls: %+v, want on node %s", calls, node)
	}
}

// TestOtherProvisionerLeftAlone: a PVC of another provisioner's class is
// never given to ours.
func TestOtherProvisionerLeftAlone(t *testing.T) {
	ctx, ns := setup(t)
	theirs := create(ctx, t, newClaim(ns, "theirs", otherClass, nil))
	bound(ctx, t, create(ctx, t, newClaim(ns, "barrier", immediateClass, nil)))
	leftAlone(ctx, t, theirs)
}

// TestFinalFailureUnselectsNode: a provisioning that failed for good is
// told in an Event, and the PVC's node is unselected so that the
// scheduler picks again.
func TestFinalFailureUnselectsNode(t *testing.T) {
	ctx, ns := setup(t)
	pvc := create(ctx, t, newClaim(ns, "full", lateClass, map[string]string{provision.AnnSelectedNode: "worker-0", behaviour: failFinal}))
	harness.Eventually(ctx, t, "the selected node removed", func() (bool, error) {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(pvc), pvc); err != nil {
			return false, err
		}
		_, selected := pvc.Annotations[provision.AnnSelectedNode]
		return !selected, nil
	})
	event(ctx, t, pvc, "ProvisioningFailed", "node worker-0 has no room")
	if calls, _ := fake.calls(pvc, ""); len(calls) == 0 || calls[0].SelectedNodeName != "worker-0" {
		t.Errorf("Provision calls: %+v", calls)
	}
	if pvc.Spec.VolumeName != "" || pvc.Annotations[behaviour] != failFinal {
		t.Errorf("PVC: volume %q, annotations %v", pvc.Spec.VolumeName, pvc.Annotations)
	}
}

// TestDeleteRetried: a failed Delete is told in an Event on the PV and
// retried; the PV goes once it succeeded.
func TestDeleteRetried(t *testing.T) {
	ctx, ns := setup(t)
	pvc := create(ctx, t, newClaim(ns, "busy", immediateClass, map[string]string{behaviour: failDeleteOnce}))
	pv := bound(ctx, t, pvc)
	if err := cl.Delete(ctx, pvc); err != nil {
		t.Fatal(err)
	}
	event(ctx, t, pv, "VolumeFailedDelete", "the disk is busy")
	harness.Eventually(ctx, t, "PV "+pv.Name+" deleted", func() (bool, error) {
		return apierrors.IsNotFound(cl.Get(ctx, client.ObjectKeyFromObject(pv), &corev1.PersistentVolume{})), nil
	})
	if _, deletes := fake.calls(pvc, pv.Name); deletes != 2 {
		t.Errorf("Delete called %d times for %s, want twice", deletes, pv.Name)
	}
}

// TestIgnoredDeleteKeepsPV: a Released PV whose Delete says "not mine"
// stays, and is not retried.
func TestIgnoredDeleteKeepsPV(t *testing.T) {
	ctx, ns := setup(t)
	pvc := create(ctx, t, newClaim(ns, "kept", immediateClass, map[string]string{behaviour: ignoreDelete}))
	pv := bound(ctx, t, pvc)
	if err := cl.Delete(ctx, pvc); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(ctx, t, "Delete called for "+pv.Name, func() (bool, error) {
		_, deletes := fake.calls(pvc, pv.Name)
		return deletes > 0, nil
	})
	time.Sleep(settle)
	if err := cl.Get(ctx, client.ObjectKeyFromObject(pv), pv); err != nil || pv.Status.Phase != corev1.VolumeReleased || pv.DeletionTimestamp != nil {
		t.Errorf("PV %s: phase %q, deleting %v (%v); want Released, kept", pv.Name, pv.Status.Phase, pv.DeletionTimestamp, err)
	}
	if _, deletes := fake.calls(pvc, pv.Name); deletes != 1 {
		t.Errorf("Delete called %d times for %s, want once", deletes, pv.Name)
	}
	if err := cl.Delete(ctx, pv); err != nil {
		t.Error(err)
	}
}
