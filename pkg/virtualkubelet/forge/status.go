package forge

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/liqo-go/liqo/pkg/consts"
)

// Reasons set on a local pod the provider does not run (yet).
const (
	// ReasonOffloadingBackOff: the pod cannot be offloaded now, for the
	// reason in the message; it is retried.
	ReasonOffloadingBackOff = "OffloadingBackOff"
	// ReasonDaemonSetPodRefused: a DaemonSet's pod reached a virtual node
	// without its DaemonSet opting in; it is never offloaded.
	ReasonDaemonSetPodRefused = "DaemonSetPodRefused"
)

// PodStatus is the local pod's status given the remote pod's: the remote
// pod's lifecycle (phase, conditions, container states, IPs, restarts),
// with the local scheduler's PodScheduled condition and the QoS class kept,
// the host IP set to the virtual node's address, the pod IPs those the
// consumer reaches the remote pod at (addrs.Local), and restartBase (the
// restarts before the provider's current pod, RestartBaseAnnotation) added
// to its containers' restart counts.
func PodStatus(local *corev1.PodStatus, remote *corev1.PodStatus, hostIP string, addrs Addresses, restartBase map[string]int32) corev1.PodStatus {
	s := *remote.DeepCopy()
	withRestartBase(&s, restartBase)
	if s.PodIP != "" {
		s.PodIP = addrs.Local(s.PodIP)
	}
	for i := range s.PodIPs {
		s.PodIPs[i].IP = addrs.Local(s.PodIPs[i].IP)
	}
	s.QOSClass = local.QOSClass
	s.NominatedNodeName = ""
	s.HostIP, s.HostIPs = hostIP, nil
	if hostIP != "" {
		s.HostIPs = []corev1.HostIP{{IP: hostIP}}
	}
	s.Conditions = filter(s.Conditions, func(c corev1.PodCondition) bool { return c.Type != corev1.PodScheduled })
	for _, c := range local.Conditions {
		if c.Type == corev1.PodScheduled {
			s.Conditions = append([]corev1.PodCondition{c}, s.Conditions...)
		}
	}
	return s
}

// Reported tells whether a remote pod's status says more than that the
// pod was created and scheduled, which the local pod, bound to the virtual
// node, already shows: a phase past Pending, container states, conditions
// other than PodScheduled, an IP, a reason or message. Until then there is
// nothing to reflect, and writing the local status (only the virtual
// node's host IP would change) would cost the consumer's API server a
// write per pod.
func Reported(remote *corev1.PodStatus) bool {
	if (remote.Phase != "" && remote.Phase != corev1.PodPending) || remote.PodIP != "" || remote.Reason != "" || remote.Message != "" ||
		len(remote.ContainerStatuses) > 0 || len(remote.InitContainerStatuses) > 0 || len(remote.EphemeralContainerStatuses) > 0 {
		return true
	}
	for _, c := range remote.Conditions {
		if c.Type != corev1.PodScheduled {
			return true
		}
	}
	return false
}

// BackOffStatus is the status of a local pod that cannot be offloaded now:
// still Pending, with the reason and the message telling why.
func BackOffStatus(local *corev1.PodStatus, message string) corev1.PodStatus {
	return RefusedStatus(local, ReasonOffloadingBackOff, message)
}

// RefusedStatus is the status of a local pod that is never offloaded:
// still Pending, with reason and message.
func RefusedStatus(local *corev1.PodStatus, reason, message string) corev1.PodStatus {
	s := *local.DeepCopy()
	s.Phase = corev1.PodPending
	s.Reason = reason
	s.Message = message
	return s
}

// UnwantedDaemonSetPod tells whether pod belongs to a DaemonSet that did not
// opt in to virtual nodes (consts.DaemonSetOnVirtualNodesAnnotation on the
// pod template, which the webhook copies there from the DaemonSet).
func UnwantedDaemonSetPod(pod *corev1.Pod) bool {
	owner := metav1.GetControllerOf(pod)
	return owner != nil && owner.Kind == "DaemonSet" && pod.Annotations[consts.DaemonSetOnVirtualNodesAnnotation] != "true"
}

// Reflected tells whether a local pod's status already came from a remote
// pod: its containers have states. A missing ShadowPod then means that the
// provider side deleted it, not that it was never created.
func Reflected(local *corev1.PodStatus) bool {
	return len(local.ContainerStatuses) > 0
}
