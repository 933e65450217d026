package offloading

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/kit"
)

// Reasons of the per-cluster conditions besides the failures of naming.go.
const (
	ReasonSelected          = "ClusterSelected"
	ReasonRemoteTerminating = "RemoteNamespaceTerminating"
)

// ReadyCondition is the type of the NamespaceOffloading's own condition; its
// reason is the offloading phase.
const ReadyCondition = "Ready"

// clusterState is what the controller knows about one peered cluster.
type clusterState struct {
	// Selected tells whether the cluster selector matches the cluster;
	// SelectorErr, when set, is why the selector matches nothing.
	Selected    bool
	SelectorErr error
	// RemoteName is the twin namespace's name; NameReason and NameErr say
	// why it cannot be created.
	RemoteName string
	NameReason string
	NameErr    error
	// Current is what the cluster reports for the namespace, nil if it has
	// reported nothing yet.
	Current *offv1beta1.RemoteNamespaceStatus
}

// wanted tells whether the cluster's NamespaceMap must list the namespace.
func (s clusterState) wanted() bool { return s.Selected && s.SelectorErr == nil && s.NameErr == nil }

// clusterConditions are the conditions users read for one cluster, in the
// documentation's words; a cluster not selected has no Ready condition.
func clusterConditions(cluster string, s clusterState) offv1beta1.RemoteNamespaceConditions {
	required := offv1beta1.RemoteNamespaceCondition{Type: offv1beta1.NamespaceOffloadingRequired}
	switch {
	case s.SelectorErr != nil:
		required.Status, required.Reason, required.Message = corev1.ConditionFalse, ReasonInvalidSelector, s.SelectorErr.Error()
	case !s.Selected:
		required.Status, required.Reason, required.Message = corev1.ConditionFalse, ReasonNotSelected,
			"You have not selected this cluster through ClusterSelector fields"
	default:
		required.Status, required.Reason, required.Message = corev1.ConditionTrue, ReasonSelected,
			"The remote cluster has been selected through the ClusterSelector field"
	}
	if required.Status != corev1.ConditionTrue {
		return offv1beta1.RemoteNamespaceConditions{required}
	}
	ready := offv1beta1.RemoteNamespaceCondition{Type: offv1beta1.NamespaceReady}
	switch {
	case s.NameErr != nil:
		ready.Status, ready.Reason, ready.Message = corev1.ConditionFalse, s.NameReason, s.NameErr.Error()
	case s.Current == nil || s.Current.RemoteNamespace != s.RemoteName:
		ready.Status, ready.Reason, ready.Message = corev1.ConditionUnknown, ReasonPending,
			fmt.Sprintf("Waiting for cluster %s to create namespace %s", cluster, s.RemoteName)
	case s.Current.Phase == offv1beta1.MappingAccepted:
		ready.Status, ready.Reason, ready.Message = corev1.ConditionTrue, ReasonCreated, "Namespace correctly offloaded on this cluster"
	case s.Current.Phase == offv1beta1.MappingCreationLoopBackOff && s.Current.Reason != ReasonAlreadyExists && providerReasons[s.Current.Reason]:
		// The provider's words, bounded: they come from another cluster.
		ready.Status, ready.Reason, ready.Message = corev1.ConditionFalse, s.Current.Reason,
			fmt.Sprintf("Cluster %s refuses namespace %s: %s", cluster, s.RemoteName, truncate(s.Current.Message, maxProviderMessage))
	case s.Current.Phase == offv1beta1.MappingCreationLoopBackOff:
		ready.Status, ready.Reason, ready.Message = corev1.ConditionFalse, ReasonAlreadyExists,
			fmt.Sprintf("Namespace %s already exists on cluster %s and was not created by Liqo for this cluster (CreationLoopBackOff): "+
				"remove it there, or unoffload and offload again with another namespace mapping strategy", s.RemoteName, cluster)
	case s.Current.Phase == offv1beta1.MappingTerminating:
		ready.Status, ready.Reason, ready.Message = corev1.ConditionUnknown, ReasonRemoteTerminating,
			fmt.Sprintf("The previous namespace %s on cluster %s is still being deleted; it will be created again once it is gone", s.RemoteName, cluster)
	default:
		ready.Status, ready.Reason, ready.Message = corev1.ConditionUnknown, ReasonPending,
			fmt.Sprintf("Cluster %s reports namespace %s in phase %q", cluster, s.RemoteName, s.Current.Phase)
	}
	return offv1beta1.RemoteNamespaceConditions{required, ready}
}

// maxProviderMessage bounds what a provider's message adds to a condition.
const maxProviderMessage = 512

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// withTransitionTimes stamps each condition with now, or with its time in
// old if its status did not change.
func withTransitionTimes(conds, old offv1beta1.RemoteNamespaceConditions, now metav1.Time) offv1beta1.RemoteNamespaceConditions {
	out := make(offv1beta1.RemoteNamespaceConditions, len(conds))
	for i, c := range conds {
		c.LastTransitionTime = now
		for _, o := range old {
			if o.Type == c.Type && o.Status == c.Status && !o.LastTransitionTime.IsZero() {
				c.LastTransitionTime = o.LastTransitionTime
			}
		}
		out[i] = c
	}
	return out
}

// readyCondition summarises the phase for kubectl wait and for users;
// pending lists the clusters an unoffload still waits for.
func readyCondition(phase offv1beta1.OffloadingPhase, conds map[string]offv1beta1.RemoteNamespaceConditions, pending []string) kit.Condition {
	c := kit.Condition{Type: ReadyCondition, Reason: string(phase)}
	var ready, waiting, failed, selectorErrs []string
	for _, cluster := range sortedKeys(conds) {
		for _, rc := range conds[cluster] {
			switch {
			case rc.Type == offv1beta1.NamespaceOffloadingRequired && rc.Reason == ReasonInvalidSelector:
				selectorErrs = append(selectorErrs, rc.Message)
			case rc.Type != offv1beta1.NamespaceReady:
			case rc.Status == corev1.ConditionTrue:
				ready = append(ready, cluster)
			case rc.Status == corev1.ConditionFalse:
				failed = append(failed, fmt.Sprintf("%s: %s: %s", cluster, rc.Reason, rc.Message))
			default:
				waiting = append(waiting, cluster)
			}
		}
	}
	switch phase {
	case offv1beta1.ReadyOffloadingPhase:
		c.OK, c.Message = true, "Namespace offloaded to "+strings.Join(ready, ", ")
	case offv1beta1.TerminatingOffloadingPhase:
		c.Message = "Unoffloading: waiting for the twin namespaces to be removed from " + strings.Join(pending, ", ")
		if len(pending) == 0 {
			c.Message = "Unoffloading"
		}
	case offv1beta1.NoClusterSelectedOffloadingPhase:
		switch {
		case len(selectorErrs) > 0:
			c.Message = selectorErrs[0]
		case len(conds) == 0:
			c.Message = "No cluster is peered: there is no virtual node to offload to"
		default:
			c.Message = "No peered cluster matches the cluster selector; check the labels of the virtual nodes"
		}
	case offv1beta1.InProgressOffloadingPhase:
		c.Unknown, c.Message = true, "Waiting for the twin namespaces on "+strings.Join(waiting, ", ")
	default:
		c.Message = strings.Join(failed, "; ")
	}
	return c
}
