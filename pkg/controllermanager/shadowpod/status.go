package shadowpod

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/kit"
)

// ConditionReady is the one condition of a ShadowPod: True when its Pod is
// Ready, False with a reason otherwise.
const ConditionReady = "Ready"

// Reasons of the Ready condition set by the controller itself; while a Pod
// exists, its own Ready reason is mirrored instead.
const (
	// ReasonNameConflict: a Pod with the ShadowPod's name exists and is not
	// controlled by it, so it is left alone and nothing runs.
	ReasonNameConflict = "NameConflict"
	// ReasonCreationFailed: the API server refused the Pod (quota, admission,
	// an invalid spec). ReasonRecreationFailed is the same once a Pod had
	// existed, which keeps that knowledge in the status.
	ReasonCreationFailed   = "PodCreationFailed"
	ReasonRecreationFailed = "PodRecreationFailed"
	// ReasonTerminating: the Pod is being deleted; a new one is created as
	// soon as it is gone.
	ReasonTerminating = "PodTerminating"
	// ReasonPodReady and ReasonPodNotReady stand in for an empty (or not
	// valid as a condition reason) reason of the Pod's Ready condition.
	ReasonPodReady    = "PodReady"
	ReasonPodNotReady = "PodNotReady"
)

// Events recorded on the ShadowPod.
const (
	EventPodRecreated   = "PodRecreated"
	EventNameConflict   = "NameConflict"
	EventCreationFailed = "PodCreationFailed"
	EventLabelsRestored = "PodLabelsRestored"
	// EventGracePeriodCapped: the pod runs with shorter grace periods than
	// its ShadowPod asks for (--max-grace-period).
	EventGracePeriodCapped = "GracePeriodCapped"
)

// podExisted tells whether the ShadowPod ever had a Pod, as far as its
// status recorded: any Ready condition except those set before a first Pod.
// It tells a first creation from a recreation without a write of its own.
func podExisted(st *offv1beta1.ShadowPodStatus) bool {
	c := meta.FindStatusCondition(st.Conditions, ConditionReady)
	if c == nil {
		return false
	}
	return c.Reason != ReasonNameConflict && c.Reason != ReasonCreationFailed
}

// mirrorPod sets the status from the ShadowPod's own Pod.
func mirrorPod(st *offv1beta1.ShadowPodStatus, pod *corev1.Pod) {
	st.Phase = pod.Status.Phase
	if st.Phase == "" {
		st.Phase = corev1.PodPending // only before the API server defaults it
	}
	if !pod.DeletionTimestamp.IsZero() {
		setReady(st, metav1.ConditionFalse, ReasonTerminating, "the pod is being deleted; it will be recreated once gone")
		return
	}
	status, reason, msg := metav1.ConditionFalse, "", "the pod has no Ready condition yet"
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			status, reason, msg = metav1.ConditionStatus(c.Status), c.Reason, c.Message
			break
		}
	}
	if status != metav1.ConditionTrue && status != metav1.ConditionFalse && status != metav1.ConditionUnknown {
		status = metav1.ConditionUnknown
	}
	if !kit.ValidReason(reason) {
		reason = ReasonPodNotReady
		if status == metav1.ConditionTrue {
			reason = ReasonPodReady
		}
	}
	setReady(st, status, reason, msg)
}

// SettleTime is how long a new Pod's first status waits to be written
// while the Pod is merely Pending: most Pods are scheduled and started
// within it, and their ShadowPod's status is then written once, Running,
// rather than Pending and then Running. A ShadowPod status write is one of
// the dearest requests a provider's API server serves (a custom resource
// embedding a whole pod spec: decoded, schema-coerced, validated and
// field-managed whole); under a burst of a thousand pods on two cores a
// pod takes several seconds to start. The consumer follows the Pod itself,
// not this status, so it waits for nothing; a Pod found unschedulable is
// reported at once.
const SettleTime = 15 * time.Second

// settling tells how long the first status write of sp waits for pod to
// settle (0: write now): only while no status was ever written, the Pod is
// younger than SettleTime, Pending, not being deleted, and not found
// unschedulable (which users must see at once).
func settling(sp *offv1beta1.ShadowPod, pod *corev1.Pod, now time.Time) time.Duration {
	if len(sp.Status.Conditions) > 0 || !pod.DeletionTimestamp.IsZero() ||
		(pod.Status.Phase != "" && pod.Status.Phase != corev1.PodPending) {
		return 0
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return 0
		}
	}
	// Creation times have a one-second resolution: the Pod may be up to a
	// second older than it looks, never younger.
	left := pod.CreationTimestamp.Add(SettleTime).Sub(now)
	if left <= 0 {
		return 0
	}
	return left
}

// notRunning sets the status of a ShadowPod that has no Pod of its own.
func notRunning(st *offv1beta1.ShadowPodStatus, reason, msg string) {
	st.Phase = corev1.PodPending
	setReady(st, metav1.ConditionFalse, reason, msg)
}

// setReady sets the Ready condition; an unchanged Pod gives an identical
// status and no write (see kit.SetCondition).
func setReady(st *offv1beta1.ShadowPodStatus, status metav1.ConditionStatus, reason, msg string) {
	kit.SetCondition(&st.Conditions, 0, kit.Condition{Type: ConditionReady, Reason: reason, Message: msg,
		OK: status == metav1.ConditionTrue, Unknown: status == metav1.ConditionUnknown})
}
