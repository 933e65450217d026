// Package forge holds the pure local→remote transformations of the
// reflection: what a local object becomes on the provider, and what the
// provider's state makes of the local object's status.
package forge

import (
	"maps"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// LocalUIDAnnotation records, on a ShadowPod, the UID of the local pod it
// stands for: a pod deleted and created again under the same name (as a
// StatefulSet does) must not adopt its predecessor's remote pod.
const LocalUIDAnnotation = "offloading.liqo.io/local-pod-uid"

// ShadowPod is the ShadowPod that asks the provider to run local in
// remoteNamespace, on behalf of the cluster localClusterID; apiServer is
// where the pod reaches its home API server through the network fabric
// (invalid without the fabric).
func ShadowPod(local *corev1.Pod, localClusterID, remoteNamespace string, apiServer netip.Addr) *offv1beta1.ShadowPod {
	labels := make(map[string]string, len(local.Labels)+2)
	maps.Copy(labels, local.Labels)
	labels[consts.ManagedByLabel] = consts.ManagedByValue
	labels[consts.OriginClusterIDLabel] = localClusterID
	annotations := make(map[string]string, len(local.Annotations)+1)
	maps.Copy(annotations, local.Annotations)
	// Last-applied configurations are large and say nothing remotely; the
	// restart base is the local pod's own bookkeeping.
	delete(annotations, corev1.LastAppliedConfigAnnotation)
	delete(annotations, RestartBaseAnnotation)
	annotations[LocalUIDAnnotation] = string(local.UID)
	spec := RemotePodSpec(&local.Spec)
	withHomeAPIServer(&spec, apiServer)
	return &offv1beta1.ShadowPod{
		ObjectMeta: metav1.ObjectMeta{Name: local.Name, Namespace: remoteNamespace, Labels: labels, Annotations: annotations},
		Spec:       offv1beta1.ShadowPodSpec{Pod: spec},
	}
}

// RemotePodSpec is the spec a local pod runs with on the provider. The
// provider schedules the pod among its own nodes, so the local scheduling
// constraints (which name the virtual node or local labels) are dropped;
// host namespaces are never granted to a consumer; and the local
// ServiceAccount's tokens are mounted from the token Secrets (TokenSecret)
// instead of being issued by the provider.
func RemotePodSpec(local *corev1.PodSpec) corev1.PodSpec {
	s := *local.DeepCopy()
	s.NodeName = ""
	s.NodeSelector = nil
	s.Affinity = nil
	s.TopologySpreadConstraints = nil
	s.SchedulerName = ""
	// Priority classes are the local cluster's; the provider's admission
	// rejects a priority value without its class.
	s.PriorityClassName, s.Priority, s.PreemptionPolicy = "", nil, nil
	s.HostNetwork, s.HostPID, s.HostIPC = false, false, false
	s.EphemeralContainers = nil
	s.Tolerations = withoutVirtualNodeToleration(s.Tolerations)

	// The local ServiceAccount's token projections become the token
	// Secrets the reflection keeps in the twin namespace. The pod runs
	// with the provider's default ServiceAccount and none of its tokens:
	// the provider's own credentials are not for a consumer's pod.
	remoteTokenVolumes(&s, serviceAccountOf(local))
	s.ServiceAccountName, s.DeprecatedServiceAccount = "", ""
	s.AutomountServiceAccountToken = ptr.To(false)
	return s
}

func withoutVirtualNodeToleration(ts []corev1.Toleration) []corev1.Toleration {
	return filter(ts, func(t corev1.Toleration) bool { return t.Key != consts.VirtualNodeTaintKey })
}

// filter keeps the items keep accepts; nil when none is left, so that an
// emptied list compares equal to an absent one.
func filter[T any](items []T, keep func(T) bool) []T {
	var out []T
	for _, it := range items {
		if keep(it) {
			out = append(out, it)
		}
	}
	return out
}
