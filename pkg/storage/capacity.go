package storage

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/liqo-go/liqo/pkg/consts"
)

// A remote volume's capacity is known only once the provider's PVC is
// bound, and that is after the local PVC is: the provider's class usually
// binds on its first consumer, the remote pod, which exists only once the
// local pod is bound to the virtual node, which needs the local PVC bound
// first. So the placeholder PV cannot carry the remote capacity when it is
// made; it starts with the request, and SyncRemoteCapacity corrects it,
// and the local PVC's status (the PV controller copies a PV's capacity to
// its claim only when the claim becomes Bound, never after), when the
// provider's PVC binds: as the external resizer does after an expansion.

// ErrNotBoundYet: the local PVC is not bound yet; ask again later.
var ErrNotBoundYet = errors.New("the local PVC is not bound yet")

// CapacityRefusal is a provider reporting a remote volume smaller than the
// local PVC asks for: the local side keeps showing the request, since a PV
// smaller than its claim would stop it binding again, and the user is told.
type CapacityRefusal struct {
	Provider            string
	Reported, Requested resource.Quantity
}

func (e *CapacityRefusal) Error() string {
	return fmt.Sprintf("cluster %s reports %s for the remote volume, less than the %s requested; the PVC keeps showing %s",
		e.Provider, e.Reported.String(), e.Requested.String(), e.Requested.String())
}

// RemoteCapacity is the capacity the local side of a remote volume shows:
// that of remote, the provider's PVC, once it is Bound, if pv is this
// provisioner's volume for provider's twin namespace, bound to local, and
// remote is local's PVC there. ok is false when there is nothing to show
// (not bound yet, or not a volume of this kind); a capacity smaller than
// local's request is a *CapacityRefusal. The consumer checks what the
// provider reports before acting on it. Pure.
func RemoteCapacity(pv *corev1.PersistentVolume, local, remote *corev1.PersistentVolumeClaim, provider, twin string) (q resource.Quantity, ok bool, err error) {
	switch {
	case pv.Annotations[consts.RemoteClusterAnnotation] != provider, pv.Annotations[consts.RemoteNamespaceAnnotation] != twin,
		pv.Spec.ClaimRef == nil, pv.Spec.ClaimRef.UID != local.UID, local.Spec.VolumeName != pv.Name,
		remote.Namespace != twin, remote.Name != local.Name, remote.Status.Phase != corev1.ClaimBound:
		return q, false, nil
	}
	got, found := remote.Status.Capacity[corev1.ResourceStorage]
	if !found || got.Sign() <= 0 {
		return q, false, nil
	}
	if want := local.Spec.Resources.Requests[corev1.ResourceStorage]; got.Cmp(want) < 0 {
		return q, false, &CapacityRefusal{Provider: provider, Reported: got, Requested: want}
	}
	return got, true, nil
}

// SyncRemoteCapacity shows the capacity of remote, provider's PVC in twin
// namespace, on the local PVC of the same name in localNamespace and its
// PV (see RemoteCapacity). It returns the capacity it wrote, nil when
// nothing changed; a *CapacityRefusal when the provider reports less than
// requested, having written nothing; ErrNotBoundYet while the local PVC is
// not bound.
func SyncRemoteCapacity(ctx context.Context, cs kubernetes.Interface, localNamespace, provider, twin string, remote *corev1.PersistentVolumeClaim) (*resource.Quantity, error) {
	pvc, err := cs.CoreV1().PersistentVolumeClaims(localNamespace).Get(ctx, remote.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if pvc.Spec.VolumeName == "" {
		// The provider's class bound at once (not on its first consumer):
		// the caller watches the remote PVC, not this one, so it asks again.
		return nil, ErrNotBoundYet
	}
	pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	q, ok, err := RemoteCapacity(pv, pvc, remote, provider, twin)
	if err != nil || !ok {
		return nil, err
	}
	changed := false
	if cur := pv.Spec.Capacity[corev1.ResourceStorage]; cur.Cmp(q) != 0 {
		pv.Spec.Capacity = withStorage(pv.Spec.Capacity, q)
		if _, err := cs.CoreV1().PersistentVolumes().Update(ctx, pv, metav1.UpdateOptions{}); err != nil {
			return nil, fmt.Errorf("showing the remote capacity on PV %s: %w", pv.Name, err)
		}
		changed = true
	}
	if cur := pvc.Status.Capacity[corev1.ResourceStorage]; pvc.Status.Phase == corev1.ClaimBound && cur.Cmp(q) != 0 {
		pvc.Status.Capacity = withStorage(pvc.Status.Capacity, q)
		if _, err := cs.CoreV1().PersistentVolumeClaims(localNamespace).UpdateStatus(ctx, pvc, metav1.UpdateOptions{}); err != nil {
			return nil, fmt.Errorf("showing the remote capacity on PVC %s/%s: %w", localNamespace, pvc.Name, err)
		}
		changed = true
	}
	if !changed {
		return nil, nil
	}
	return &q, nil
}

// withStorage is a copy of l with its storage set to q.
func withStorage(l corev1.ResourceList, q resource.Quantity) corev1.ResourceList {
	out := l.DeepCopy()
	if out == nil {
		out = corev1.ResourceList{}
	}
	out[corev1.ResourceStorage] = q
	return out
}
