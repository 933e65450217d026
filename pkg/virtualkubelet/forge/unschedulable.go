package forge

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// ReasonRemoteUnschedulable: the provider cannot run the pod: its
// admission found no node with room for it, or its scheduler has not
// placed it. Past a time limit the local pod fails, so that its controller
// creates it again and the placement picks another cluster.
const ReasonRemoteUnschedulable = "RemoteUnschedulable"

// DefaultUnschedulableTimeout is how long an offloaded pod may stay
// unschedulable on its provider before it fails locally.
const DefaultUnschedulableTimeout = 60 * time.Second

// maxRemoteMessage bounds what of a provider's scheduling message is shown
// on the local pod: the provider writes it.
const maxRemoteMessage = 512

// RemoteUnschedulable tells whether the provider's scheduler found no node
// for remote, since when (the later of its PodScheduled condition's last
// transition and notBefore: the provider's clock is not trusted to make a
// pod fail earlier than it was bound here), and what the scheduler said.
func RemoteUnschedulable(remote *corev1.Pod, notBefore time.Time) (time.Time, string, bool) {
	if remote.Spec.NodeName != "" || (remote.Status.Phase != "" && remote.Status.Phase != corev1.PodPending) {
		return time.Time{}, "", false
	}
	for _, c := range remote.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			since := c.LastTransitionTime.Time
			if since.Before(notBefore) {
				since = notBefore
			}
			return since, RemoteText(c.Message), true
		}
	}
	return time.Time{}, "", false
}

// BoundSince is when the local pod was bound to the virtual node (its
// PodScheduled condition), or its creation if it shows none.
func BoundSince(local *corev1.Pod) time.Time {
	for _, c := range local.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time
		}
	}
	return local.CreationTimestamp.Time
}

// UnschedulableMessage is what a local pod the provider cannot run says
// while it waits: who cannot, why, and when the pod fails here (left,
// the time limit; none if zero).
func UnschedulableMessage(provider, why string, left time.Duration) string {
	if left <= 0 {
		// No time limit: the pod waits for the provider.
		return fmt.Sprintf("cluster %s cannot run the pod: %s", provider, why)
	}
	return fmt.Sprintf("cluster %s cannot run the pod: %s; unless it can within %s, the pod fails here so that its controller creates it again elsewhere",
		provider, why, left.Round(time.Second))
}

// FailedStatus is the status of a local pod given up on: Failed, with
// reason and message, its other fields kept. A kubelet's Failed is final:
// the pod's controller replaces it.
func FailedStatus(local *corev1.PodStatus, reason, message string) corev1.PodStatus {
	s := *local.DeepCopy()
	s.Phase = corev1.PodFailed
	s.Reason = reason
	s.Message = message
	for i := range s.Conditions {
		if s.Conditions[i].Type == corev1.PodReady || s.Conditions[i].Type == corev1.ContainersReady {
			s.Conditions[i].Status = corev1.ConditionFalse
		}
	}
	return s
}

// GivenUp tells whether a local pod failed because its provider could not
// run it: nothing is offloaded for it any more.
func GivenUp(local *corev1.PodStatus) bool {
	return local.Phase == corev1.PodFailed && local.Reason == ReasonRemoteUnschedulable
}

// RemoteText is a provider's text fit to show on a local object: valid
// UTF-8, at most maxRemoteMessage bytes.
func RemoteText(s string) string {
	if len(s) > maxRemoteMessage {
		s = s[:maxRemoteMessage] + "…"
	}
	return strings.ToValidUTF8(s, "")
}
