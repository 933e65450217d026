package reflection

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/forge"
)

// shadowPodMetadata is an empty ShadowPod of which the twin caches hold the
// metadata only: its labels, annotations, UID and deletion are all the
// reflection reads of it, while the whole object carries a pod spec. A
// metadata-only watch spares the provider's API server encoding it, and
// this side decoding it, on every change of every ShadowPod.
func shadowPodMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(offv1beta1.GroupVersion.WithKind("ShadowPod"))
	return m
}

// reconcile brings one local pod and its ShadowPod in line. It returns true
// to be retried later without an error (waiting on something that sends no
// event, such as a rejected ShadowPod).
func (r *reflector) reconcile(ctx context.Context, key types.NamespacedName) (bool, error) {
	local, err := r.localPod(key)
	if err != nil {
		return false, err
	}
	if local == nil {
		r.deletedLocal.Delete(key)
	}
	if local != nil && local.DeletionTimestamp.IsZero() && !forge.Reflected(&local.Status) && forge.UnwantedDaemonSetPod(local) {
		// Node agents do not run on a virtual node: refused at once, no
		// ShadowPod, whatever its namespace.
		msg := fmt.Sprintf("pods of DaemonSets run on virtual nodes only if their DaemonSet has the annotation %s=true", consts.DaemonSetOnVirtualNodesAnnotation)
		if local.Status.Reason != forge.ReasonDaemonSetPodRefused {
			r.cfg.Recorder.Event(local, corev1.EventTypeWarning, forge.ReasonDaemonSetPodRefused, msg)
		}
		return false, r.writeStatus(ctx, local, forge.RefusedStatus(&local.Status, forge.ReasonDaemonSetPodRefused, msg))
	}
	t := r.twinOf(key.Namespace)
	if t != nil && !t.podsReady(r) {
		// Enqueued again once the twin's watches are synced.
		return false, nil
	}
	if t == nil {
		if local == nil {
			return false, nil
		}
		return false, r.notOffloaded(ctx, local)
	}
	sp, rp, err := r.remoteState(ctx, t, key.Name)
	if err != nil {
		return false, err
	}
	if sp != nil && sp.Labels[consts.OriginClusterIDLabel] != r.cfg.LocalClusterID {
		if local == nil {
			return false, nil
		}
		return true, r.backOff(ctx, local, fmt.Sprintf("a ShadowPod %s/%s exists on cluster %s and was not created by this cluster",
			t.remote, key.Name, r.cfg.ProviderID))
	}
	if sp != nil && local == nil {
		if theirs, err := r.otherNodesPod(ctx, key, sp); err != nil || theirs {
			return false, err
		}
	}
	if sp != nil && (local == nil || sp.Annotations[forge.LocalUIDAnnotation] != string(local.UID)) {
		// The local pod is gone, or this ShadowPod was made for a former pod
		// of the same name: remove it, its deletion event comes back here.
		return false, r.deleteShadow(ctx, sp)
	}
	if local == nil {
		if sp == nil {
			r.otherNodes.Delete(key)
		}
		return false, nil
	}
	if !local.DeletionTimestamp.IsZero() {
		return false, r.terminate(ctx, local, sp, rp)
	}
	if forge.GivenUp(&local.Status) {
		// Failed for good: what the provider still holds for it goes.
		if sp != nil && sp.DeletionTimestamp.IsZero() {
			return false, r.deleteShadow(ctx, sp)
		}
		return false, nil
	}
	if sp == nil {
		if forge.Reflected(&local.Status) {
			// The ShadowPod ran and is gone: deleted on the provider's side.
			// Deleting the local pod lets its controller create a new one.
			r.cfg.Recorder.Eventf(local, corev1.EventTypeWarning, "RemotePodDeleted",
				"the ShadowPod on cluster %s was deleted; deleting the local pod", r.cfg.ProviderID)
			return false, r.deleteLocal(ctx, local)
		}
		return r.create(ctx, local, t)
	}
	// The token Secrets stay while the pod runs: one the provider's token
	// keeper deleted while this node was away (restarting: its pods were
	// not counted) is written again. A refusal concerns new pods only.
	var refused *tokenRefusal
	if err := r.tokens.ensure(ctx, local, t.remote); err != nil && !errors.As(err, &refused) {
		return false, err
	}
	if rp == nil || !metav1.IsControlledBy(rp, sp) {
		// The provider has not created the pod yet: its creation wakes us.
		return false, nil
	}
	if since, why, ok := forge.RemoteUnschedulable(rp, forge.BoundSince(local)); ok {
		return false, r.unschedulable(ctx, local, sp, since, why)
	}
	if !forge.Reported(&rp.Status) && local.Status.Reason == "" {
		// Created and scheduled remotely, nothing more yet: the local pod
		// shows as much. (A back-off reason shown locally is cleared now.)
		return false, nil
	}
	base := forge.RestartBase(local.Annotations)
	if forge.Recreated(&local.Status, &rp.Status, base) {
		base = forge.NextRestartBase(&local.Status, base)
		if local, err = r.recordRestartBase(ctx, local, base); err != nil || local == nil {
			return false, err
		}
	}
	addrs, err := r.addresses(ctx)
	if err != nil {
		return false, err
	}
	return false, r.writeStatus(ctx, local, forge.PodStatus(&local.Status, &rp.Status, r.cfg.HostIP, addrs, base))
}

// recordRestartBase writes base into the local pod's
// forge.RestartBaseAnnotation before any status of the provider's new pod
// is reflected: the status from then on counts on it, and a restart of
// this manager must find it. It returns the pod as written (nil if it is
// gone).
func (r *reflector) recordRestartBase(ctx context.Context, local *corev1.Pod, base map[string]int32) (*corev1.Pod, error) {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": local.ResourceVersion,
		"annotations":     map[string]string{forge.RestartBaseAnnotation: forge.FormatRestartBase(base)},
	}})
	if err != nil {
		return nil, err
	}
	written, err := r.cfg.Local.CoreV1().Pods(local.Namespace).Patch(ctx, local.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("recording the restarts before the provider's new pod: %w", err)
	}
	r.written.Mutation(written)
	r.cfg.Recorder.Eventf(local, corev1.EventTypeNormal, "RemotePodRecreated",
		"cluster %s made a new pod for this one; its containers' restart counts go on from %s", r.cfg.ProviderID, forge.FormatRestartBase(base))
	return written, nil
}

// remoteState reads the ShadowPod (its metadata) and the provider's pod of
// a name from the twin's caches; either may be nil.
func (r *reflector) remoteState(ctx context.Context, t *twin, name string) (*metav1.PartialObjectMetadata, *corev1.Pod, error) {
	key := types.NamespacedName{Namespace: t.remote, Name: name}
	sp := shadowPodMetadata()
	if err := t.cache.Get(ctx, key, sp); apierrors.IsNotFound(err) {
		sp = nil
	} else if err != nil {
		return nil, nil, err
	}
	rp := &corev1.Pod{}
	if err := t.cache.Get(ctx, key, rp); apierrors.IsNotFound(err) {
		rp = nil
	} else if err != nil {
		return nil, nil, err
	}
	return sp, rp, nil
}

// create asks the provider for the pod, once the token Secrets it mounts
// are there. A refusal (quota, validation, a token Secret's name taken) is
// shown on the local pod and retried with backoff, since quota can free up.
func (r *reflector) create(ctx context.Context, local *corev1.Pod, t *twin) (bool, error) {
	var refused *tokenRefusal
	switch err := r.tokens.ensure(ctx, local, t.remote); {
	case errors.As(err, &refused):
		return true, r.refuse(ctx, local, refused.Error())
	case err != nil:
		return false, err
	}
	addrs, err := r.addresses(ctx)
	if err != nil {
		return false, err
	}
	sp := forge.ShadowPod(local, r.cfg.LocalClusterID, t.remote, addrs.HomeAPIServer)
	err = r.remote.Create(ctx, sp)
	switch {
	case err == nil, apierrors.IsAlreadyExists(err):
		return false, nil
	case apierrors.HasStatusCause(err, forge.ReasonRemoteUnschedulable):
		// The provider's admission found no node with room for it: as if
		// its scheduler had said so, the pod fails here past the time
		// limit, and is retried until then.
		return true, r.unschedulable(ctx, local, nil, forge.BoundSince(local),
			forge.RemoteText(causeMessage(err)))
	case apierrors.IsForbidden(err), apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		return true, r.refuse(ctx, local, fmt.Sprintf("cluster %s refused the pod: %v", r.cfg.ProviderID, err))
	default:
		return false, err
	}
}

// unschedulable handles a local pod its provider cannot run since since,
// for the reason why: Pending, saying so, until the time limit; then
// Failed, and its ShadowPod (if any) deleted.
func (r *reflector) unschedulable(ctx context.Context, local *corev1.Pod, sp *metav1.PartialObjectMetadata, since time.Time, why string) error {
	limit := r.cfg.UnschedulableTimeout
	if left := limit - time.Since(since); limit <= 0 || left > 0 {
		msg := forge.UnschedulableMessage(r.cfg.ProviderID, why, limit)
		if limit > 0 {
			// Nothing else wakes the pod when its time is up.
			r.queue.AddAfter(client.ObjectKeyFromObject(local), left)
		}
		if local.Status.Reason != forge.ReasonRemoteUnschedulable {
			r.cfg.Recorder.Event(local, corev1.EventTypeWarning, forge.ReasonRemoteUnschedulable, msg)
		}
		return r.writeStatus(ctx, local, forge.RefusedStatus(&local.Status, forge.ReasonRemoteUnschedulable, msg))
	}
	msg := fmt.Sprintf("cluster %s could not run the pod for %s (%s): failed, so that its controller creates it again elsewhere",
		r.cfg.ProviderID, limit, why)
	if err := r.writeStatus(ctx, local, forge.FailedStatus(&local.Status, forge.ReasonRemoteUnschedulable, msg)); err != nil {
		return err
	}
	r.cfg.Recorder.Event(local, corev1.EventTypeWarning, forge.ReasonRemoteUnschedulable, msg)
	if sp != nil {
		return r.deleteShadow(ctx, sp)
	}
	return nil
}

// causeMessage is the message of err's RemoteUnschedulable status cause
// (the whole error's message if it has none).
func causeMessage(err error) string {
	if c, ok := apierrors.StatusCause(err, forge.ReasonRemoteUnschedulable); ok && c.Message != "" {
		return c.Message
	}
	return err.Error()
}

// refuse keeps a pod Pending with the reason it cannot be offloaded now,
// and tells it in an Event once.
func (r *reflector) refuse(ctx context.Context, local *corev1.Pod, msg string) error {
	if local.Status.Message != msg {
		r.cfg.Recorder.Event(local, corev1.EventTypeWarning, forge.ReasonOffloadingBackOff, msg)
	}
	return r.backOff(ctx, local, msg)
}

// terminate finishes a local pod's deletion as a kubelet does: the remote
// pod stops first, then the local pod is removed for good.
func (r *reflector) terminate(ctx context.Context, local *corev1.Pod, sp *metav1.PartialObjectMetadata, rp *corev1.Pod) error {
	if sp != nil {
		if sp.DeletionTimestamp.IsZero() {
			return r.deleteShadow(ctx, sp)
		}
		return nil
	}
	if rp != nil {
		// Its deletion wakes us.
		return nil
	}
	return r.deleteLocal(ctx, local)
}

// notOffloaded handles a pod bound to the virtual node in a namespace that
// has no twin on the provider: a pod that ran there (its namespace was
// unoffloaded) is deleted so that its controller reschedules it; another is
// kept Pending with the reason.
func (r *reflector) notOffloaded(ctx context.Context, local *corev1.Pod) error {
	if !local.DeletionTimestamp.IsZero() || forge.Reflected(&local.Status) {
		return r.deleteLocal(ctx, local)
	}
	return r.backOff(ctx, local, fmt.Sprintf("namespace %s is not offloaded to cluster %s", local.Namespace, r.cfg.ProviderID))
}

func (r *reflector) backOff(ctx context.Context, local *corev1.Pod, msg string) error {
	return r.writeStatus(ctx, local, forge.BackOffStatus(&local.Status, msg))
}

func (r *reflector) writeStatus(ctx context.Context, local *corev1.Pod, status corev1.PodStatus) error {
	if equality.Semantic.DeepEqual(local.Status, status) {
		return nil
	}
	p := local.DeepCopy()
	p.Status = status
	written, err := r.cfg.Local.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err == nil {
		r.written.Mutation(written)
	}
	return err
}

// localPodCached trims a local pod for the cache. Nothing reads its managed
// fields. Once its remote pod has reported (forge.Reflected), only the
// token keeper reads its spec (forge.TokenFields): the rest served to make
// its ShadowPod, which is never made again for it (a reflected pod whose
// ShadowPod is gone is deleted). At 10,000 offloaded pods the specs were
// a fifth of the consumer manager's heap. A status write sends the cached
// pod back as it is: the API server keeps the stored spec on pods/status.
func localPodCached(obj any) (any, error) {
	if p, ok := obj.(*corev1.Pod); ok {
		p.ManagedFields = nil
		if forge.Reflected(&p.Status) {
			spec := forge.TokenFields(&p.Spec)
			spec.NodeName = p.Spec.NodeName
			p.Spec = spec
		}
	}
	return obj, nil
}

// localPod is the local pod of key (nil if there is none), in its newest
// version known here: the cache's, or the one this reflector's last status
// write returned if the cache has not seen it yet. A remote pod turns
// Pending, then Running, faster than the write of Pending comes back through
// the watch under a burst, and writing Running over the cache's older copy
// was refused as a conflict, then retried: one pod in five to ten at
// N = 1,000, each a wasted write and the retry's delay.
func (r *reflector) localPod(key types.NamespacedName) (*corev1.Pod, error) {
	obj, exists, err := r.written.GetByKey(key.String())
	if err != nil || !exists {
		return nil, err
	}
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, fmt.Errorf("local pod %s: unexpected %T in the cache", key, obj)
	}
	return p, nil
}

// otherNodesPod reports whether the ShadowPod sp, which no pod of this
// node stands behind, is the ShadowPod of a local pod bound to another
// virtual node of the provider: the twin namespaces are the provider's,
// shared by its nodes, and each node reflects its own pods only. A local
// pod's node never changes, so the answer is kept by its UID.
func (r *reflector) otherNodesPod(ctx context.Context, key types.NamespacedName, sp *metav1.PartialObjectMetadata) (bool, error) {
	uid := sp.Annotations[forge.LocalUIDAnnotation]
	if known, ok := r.otherNodes.Load(key); ok && known == uid {
		return true, nil
	}
	p, err := r.cfg.Local.CoreV1().Pods(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the local pod of ShadowPod %s: %w", sp.Name, err)
	}
	if string(p.UID) != uid || p.Spec.NodeName == "" || p.Spec.NodeName == r.cfg.NodeName {
		return false, nil
	}
	r.otherNodes.Store(key, uid)
	return true, nil
}

func (r *reflector) deleteShadow(ctx context.Context, sp *metav1.PartialObjectMetadata) error {
	return client.IgnoreNotFound(r.remote.Delete(ctx, sp, client.Preconditions{UID: &sp.UID}))
}

// deleteLocal removes a local pod at once: what ran for it remotely is gone.
// A pod deleted already is not deleted again while the cache still holds it.
func (r *reflector) deleteLocal(ctx context.Context, local *corev1.Pod) error {
	key := client.ObjectKeyFromObject(local)
	if uid, ok := r.deletedLocal.Load(key); ok && uid == local.UID {
		return nil
	}
	err := r.cfg.Local.CoreV1().Pods(local.Namespace).Delete(ctx, local.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0), Preconditions: &metav1.Preconditions{UID: &local.UID}})
	switch {
	case err == nil, apierrors.IsNotFound(err):
		r.deletedLocal.Store(key, local.UID)
		return nil
	case apierrors.IsConflict(err):
		return nil
	}
	return err
}
