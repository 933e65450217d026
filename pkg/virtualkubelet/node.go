package virtualkubelet

import (
	"maps"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/liqo-go/liqo/pkg/consts"
)

// Reasons of the virtual node's Ready condition, also passed to RunNode's
// ready callback.
const (
	ReasonRemoteReachable   = "RemoteClusterReachable"
	ReasonRemoteUnreachable = "RemoteClusterUnreachable"
	// ReasonUnreachableInGrace: the remote cluster is unreachable, but for
	// less than the grace (NodeConfig.UnreachableGrace): the node stays
	// Ready, so that its pods are not evicted and recreated in bulk after a
	// glitch, and takes no new pod (NetworkUnavailable, whose taint the node
	// lifecycle controller adds).
	ReasonUnreachableInGrace = "RemoteClusterUnreachableInGrace"
)

// The platform every virtual node reports: the pods it runs are placed by
// the remote scheduler on the remote nodes, so this only has to satisfy the
// usual node selectors of ordinary workloads.
const (
	nodeOS   = "linux"
	nodeArch = "amd64"
)

// controlPlaneTaintPrefix marks the taints the control plane itself manages
// (not-ready, unreachable, unschedulable for a cordon): adoption keeps them,
// or the runner and the node lifecycle controller would undo each other.
const controlPlaneTaintPrefix = "node.kubernetes.io/"

// remoteState is what the health check last learnt about the remote cluster.
type remoteState struct {
	ready bool
	// message explains ready; empty takes a default.
	message string
	// since is when ready last changed.
	since time.Time
	// graced: unreachable for less than the grace, the Ready condition
	// still True.
	graced bool
	// readySince is when the Ready condition last changed.
	readySince time.Time
	// version is the remote API server's git version.
	version string
}

// buildNode is the Node the runner wants: metadata, spec and status.
// started is the transition time of the conditions that never change.
func buildNode(cfg NodeConfig, st remoteState, started time.Time) *corev1.Node {
	labels := make(map[string]string, len(cfg.Labels)+6)
	maps.Copy(labels, cfg.Labels)
	labels[consts.TypeLabel] = consts.TypeVirtualNode
	labels[consts.RemoteClusterIDLabel] = cfg.RemoteClusterID
	labels[corev1.LabelHostname] = cfg.Name
	labels[corev1.LabelOSStable] = nodeOS
	labels[corev1.LabelArchStable] = nodeArch
	// kubectl get nodes shows this as the node's role, as the docs expect.
	labels[consts.VirtualNodeRoleLabel] = ""

	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: cfg.Name, Labels: labels},
		Spec:       corev1.NodeSpec{Taints: nodeTaints(cfg.Taints)},
		Status: corev1.NodeStatus{
			Capacity:        cfg.Capacity.DeepCopy(),
			Allocatable:     cfg.Capacity.DeepCopy(),
			Conditions:      nodeConditions(st, started),
			Addresses:       nodeAddresses(cfg),
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: cfg.Port}},
			NodeInfo: corev1.NodeSystemInfo{
				KubeletVersion:  st.version,
				OperatingSystem: nodeOS,
				Architecture:    nodeArch,
			},
		},
	}
}

// nodeAddresses is the kubelet API's address, the one the API server
// connects to. The node's name is not published as its Hostname address:
// the API server prefers that type by default, and no resolver knows the
// name of a virtual node.
func nodeAddresses(cfg NodeConfig) []corev1.NodeAddress {
	if cfg.Address == "" {
		return nil
	}
	return []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: cfg.Address}}
}

// virtualNodeTaint keeps pods off the virtual node unless they tolerate
// being offloaded; NoExecute also evicts pods bound to it by name.
var virtualNodeTaint = corev1.Taint{
	Key:    consts.VirtualNodeTaintKey,
	Value:  consts.VirtualNodeTaintVal,
	Effect: corev1.TaintEffectNoExecute,
}

// nodeTaints puts the virtual-node taint first, replacing a configured one
// with the same key and effect, whatever its value.
func nodeTaints(extra []corev1.Taint) []corev1.Taint {
	taints := []corev1.Taint{virtualNodeTaint}
	for _, t := range extra {
		if t.Key == virtualNodeTaint.Key && t.Effect == virtualNodeTaint.Effect {
			continue
		}
		taints = append(taints, t)
	}
	return taints
}

func nodeConditions(st remoteState, started time.Time) []corev1.NodeCondition {
	ready := corev1.NodeCondition{
		Type:    corev1.NodeReady,
		Status:  corev1.ConditionTrue,
		Reason:  ReasonRemoteReachable,
		Message: "the remote cluster's API server is ready",
	}
	network := corev1.NodeCondition{Type: corev1.NodeNetworkUnavailable, Status: corev1.ConditionFalse,
		Reason: "RemoteNetworkAvailable", Message: "the pod network is provided by the remote cluster"}
	switch {
	case !st.ready && st.graced:
		ready.Reason = ReasonUnreachableInGrace
		ready.Message = "the remote cluster is unreachable since " + st.since.UTC().Format(time.RFC3339) +
			": its pods are kept; the node turns NotReady at the end of the grace (--provider-unreachable-grace)"
	case !st.ready:
		ready.Status = corev1.ConditionFalse
		ready.Reason = ReasonRemoteUnreachable
		ready.Message = "the remote cluster's API server is not reachable or not ready"
	}
	if !st.ready {
		// The node lifecycle controller taints a node whose network is
		// unavailable NoSchedule: no new pod lands here meanwhile.
		network.Status, network.Reason = corev1.ConditionTrue, ReasonRemoteUnreachable
		network.Message = "the remote cluster is unreachable"
	}
	if st.message != "" && !st.graced {
		ready.Message = st.message
	}
	if st.message != "" && !st.ready {
		network.Message = st.message
	}
	readySince := st.readySince
	if readySince.IsZero() {
		readySince = st.since
	}
	ready.LastTransitionTime = metav1.NewTime(readySince)
	ready.LastHeartbeatTime = ready.LastTransitionTime
	network.LastTransitionTime = metav1.NewTime(st.since)
	network.LastHeartbeatTime = network.LastTransitionTime

	// The remote cluster, not this node, owns memory, disks, PIDs and the
	// pod network, so the local pressure signals never fire.
	fixed := func(t corev1.NodeConditionType, reason, message string) corev1.NodeCondition {
		at := metav1.NewTime(started)
		return corev1.NodeCondition{
			Type: t, Status: corev1.ConditionFalse, Reason: reason, Message: message,
			LastTransitionTime: at, LastHeartbeatTime: at,
		}
	}
	return []corev1.NodeCondition{
		ready,
		fixed(corev1.NodeMemoryPressure, "NoMemoryPressure", "memory is managed by the remote cluster"),
		fixed(corev1.NodeDiskPressure, "NoDiskPressure", "disks are managed by the remote cluster"),
		fixed(corev1.NodePIDPressure, "NoPIDPressure", "processes are managed by the remote cluster"),
		network,
	}
}

// adoptNode turns an existing Node into the wanted one, for the fields the
// node controller does not write (it only patches status, labels and
// annotations): the wanted labels are set and other labels kept, the wanted
// taints replace the existing ones except the control plane's own. It
// reports whether anything changed.
func adoptNode(existing, want *corev1.Node) (*corev1.Node, bool) {
	out := existing.DeepCopy()
	changed := false
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	for k, v := range want.Labels {
		if cur, ok := out.Labels[k]; !ok || cur != v {
			out.Labels[k] = v
			changed = true
		}
	}
	taints := mergeTaints(existing.Spec.Taints, want.Spec.Taints)
	if !sameTaints(taints, existing.Spec.Taints) {
		out.Spec.Taints = taints
		changed = true
	}
	return out, changed
}

// mergeTaints returns want followed by the control plane's taints of
// existing that want does not override.
func mergeTaints(existing, want []corev1.Taint) []corev1.Taint {
	out := make([]corev1.Taint, 0, len(want)+len(existing))
	out = append(out, want...)
	for _, t := range existing {
		if !strings.HasPrefix(t.Key, controlPlaneTaintPrefix) {
			continue
		}
		overridden := false
		for _, w := range want {
			if w.Key == t.Key && w.Effect == t.Effect {
				overridden = true
				break
			}
		}
		if !overridden {
			out = append(out, t)
		}
	}
	return out
}

// sameTaints compares taints as sets, ignoring TimeAdded: the node lifecycle
// controller stamps it, and the order is irrelevant to the scheduler.
func sameTaints(a, b []corev1.Taint) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		found := false
		for _, y := range b {
			if x.Key == y.Key && x.Value == y.Value && x.Effect == y.Effect {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// isOtherNode tells whether an existing Node with the virtual node's name
// belongs to something else (a real node, or another peering's virtual
// node), which adoption must never take over.
func isOtherNode(existing *corev1.Node, remoteClusterID string) bool {
	if existing.Labels[consts.TypeLabel] != consts.TypeVirtualNode {
		return true
	}
	id, ok := existing.Labels[consts.RemoteClusterIDLabel]
	return ok && id != remoteClusterID
}
