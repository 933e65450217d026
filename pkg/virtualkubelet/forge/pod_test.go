package forge

import (
	"net/netip"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/ipam"
)

func seedPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "test-offload", Namespace: "default", UID: "uid-1",
			Labels:      map[string]string{"app": "demo"},
			Annotations: map[string]string{corev1.LastAppliedConfigAnnotation: "{...}", "note": "kept"}},
		Spec: corev1.PodSpec{
			NodeName:          "milan",
			NodeSelector:      map[string]string{consts.TypeLabel: consts.TypeVirtualNode},
			Affinity:          &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}},
			SchedulerName:     "default-scheduler",
			PriorityClassName: "high", Priority: ptr.To[int32](1000),
			HostNetwork: true, HostPID: true, HostIPC: true,
			ServiceAccountName: "default", DeprecatedServiceAccount: "default",
			Tolerations: []corev1.Toleration{
				{Key: consts.VirtualNodeTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
			},
			Volumes: []corev1.Volume{
				{Name: "kube-api-access-abcde", VolumeSource: corev1.VolumeSource{Projected: kubeAPIAccess()}},
				{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			},
			Containers: []corev1.Container{{Name: "app", Image: "busybox", VolumeMounts: []corev1.VolumeMount{
				{Name: "kube-api-access-abcde", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"},
				{Name: "data", MountPath: "/data"},
			}}},
		},
	}
}

func TestShadowPod(t *testing.T) {
	local := seedPod()
	before := local.DeepCopy()
	sp := ShadowPod(local, "rome", "default-rome", netip.Addr{})
	checks := []struct {
		name string
		ok   bool
	}{
		{"name and namespace", sp.Name == "test-offload" && sp.Namespace == "default-rome"},
		{"local labels kept", sp.Labels["app"] == "demo"},
		{"origin label", sp.Labels[consts.OriginClusterIDLabel] == "rome"},
		{"managed-by label", sp.Labels[consts.ManagedByLabel] == consts.ManagedByValue},
		{"local UID recorded", sp.Annotations[LocalUIDAnnotation] == "uid-1"},
		{"user annotation kept", sp.Annotations["note"] == "kept"},
		{"last-applied dropped", sp.Annotations[corev1.LastAppliedConfigAnnotation] == ""},
		{"node name dropped", sp.Spec.Pod.NodeName == ""},
		{"node selector dropped", sp.Spec.Pod.NodeSelector == nil},
		{"affinity dropped", sp.Spec.Pod.Affinity == nil},
		{"scheduler dropped", sp.Spec.Pod.SchedulerName == ""},
		{"priority dropped", sp.Spec.Pod.PriorityClassName == "" && sp.Spec.Pod.Priority == nil},
		{"host namespaces off", !sp.Spec.Pod.HostNetwork && !sp.Spec.Pod.HostPID && !sp.Spec.Pod.HostIPC},
		{"virtual-node toleration removed, others kept", len(sp.Spec.Pod.Tolerations) == 1 &&
			sp.Spec.Pod.Tolerations[0].Key == "node.kubernetes.io/not-ready"},
		{"token volume mounts the token Secret", len(sp.Spec.Pod.Volumes) == 2 && sp.Spec.Pod.Volumes[0].Projected != nil &&
			sp.Spec.Pod.Volumes[0].Projected.Sources[0].Secret != nil &&
			sp.Spec.Pod.Volumes[0].Projected.Sources[0].Secret.Name == "liqo-token-default"},
		{"mounts kept", len(sp.Spec.Pod.Containers[0].VolumeMounts) == 2},
		{"no token automount", sp.Spec.Pod.AutomountServiceAccountToken != nil && !*sp.Spec.Pod.AutomountServiceAccountToken},
		{"remote default service account", sp.Spec.Pod.ServiceAccountName == "" && sp.Spec.Pod.DeprecatedServiceAccount == ""},
		{"containers kept", sp.Spec.Pod.Containers[0].Image == "busybox"},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: got %+v", c.name, sp)
		}
	}
	if !reflect.DeepEqual(local, before) {
		t.Errorf("the local pod was modified: %+v", local.Spec)
	}
}

func TestPodStatus(t *testing.T) {
	start := metav1.Now()
	scheduled := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, Reason: "local"}
	local := corev1.PodStatus{Phase: corev1.PodPending, QOSClass: corev1.PodQOSBestEffort, Conditions: []corev1.PodCondition{scheduled}}
	remote := corev1.PodStatus{
		Phase: corev1.PodRunning, QOSClass: corev1.PodQOSBurstable, HostIP: "10.0.0.9", PodIP: "10.244.0.7",
		PodIPs: []corev1.PodIP{{IP: "10.244.0.7"}}, StartTime: &start,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, Reason: "remote"},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue},
		},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, RestartCount: 3}},
	}
	got := PodStatus(&local, &remote, "127.0.0.1", Addresses{}, nil)
	switch {
	case got.Phase != corev1.PodRunning:
		t.Errorf("phase %s, want Running", got.Phase)
	case got.QOSClass != corev1.PodQOSBestEffort:
		t.Errorf("QoS class %s, want the local one", got.QOSClass)
	case got.HostIP != "127.0.0.1" || len(got.HostIPs) != 1 || got.HostIPs[0].IP != "127.0.0.1":
		t.Errorf("host IP %q %v, want the virtual node's", got.HostIP, got.HostIPs)
	case got.PodIP != "10.244.0.7" || len(got.PodIPs) != 1:
		t.Errorf("pod IPs %q %v, want the remote pod's", got.PodIP, got.PodIPs)
	case len(got.ContainerStatuses) != 1 || got.ContainerStatuses[0].RestartCount != 3:
		t.Errorf("container statuses %v, want the remote ones", got.ContainerStatuses)
	case len(got.Conditions) != 2 || got.Conditions[0].Reason != "local" || got.Conditions[1].Type != corev1.PodReady:
		t.Errorf("conditions %v, want the local PodScheduled and the remote others", got.Conditions)
	case !Reflected(&got):
		t.Errorf("a status with container statuses counts as reflected")
	}
	if remote.Conditions[0].Reason != "remote" || remote.HostIP != "10.0.0.9" {
		t.Errorf("the remote status was modified")
	}
}

func TestReported(t *testing.T) {
	scheduled := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}
	tests := []struct {
		name   string
		remote corev1.PodStatus
		want   bool
	}{
		{"just created", corev1.PodStatus{}, false},
		{"pending", corev1.PodStatus{Phase: corev1.PodPending, QOSClass: corev1.PodQOSBestEffort}, false},
		{"scheduled", corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{scheduled}}, false},
		{"unschedulable", corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable"}}}, false},
		{"initialized", corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{scheduled,
			{Type: corev1.PodInitialized, Status: corev1.ConditionFalse}}}, true},
		{"containers creating", corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: "app"}}}, true},
		{"init containers", corev1.PodStatus{Phase: corev1.PodPending, InitContainerStatuses: []corev1.ContainerStatus{{Name: "init"}}}, true},
		{"an IP", corev1.PodStatus{Phase: corev1.PodPending, PodIP: "10.0.0.1"}, true},
		{"evicted", corev1.PodStatus{Phase: corev1.PodPending, Reason: "Evicted", Message: "low on memory"}, true},
		{"running", corev1.PodStatus{Phase: corev1.PodRunning}, true},
		{"failed", corev1.PodStatus{Phase: corev1.PodFailed}, true},
	}
	for _, tc := range tests {
		if got := Reported(&tc.remote); got != tc.want {
			t.Errorf("%s: Reported = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestBackOffStatus(t *testing.T) {
	local := corev1.PodStatus{Phase: corev1.PodPending, QOSClass: corev1.PodQOSBestEffort}
	got := BackOffStatus(&local, "quota usage exceeded")
	if got.Phase != corev1.PodPending || got.Reason != ReasonOffloadingBackOff || got.Message != "quota usage exceeded" ||
		got.QOSClass != corev1.PodQOSBestEffort || Reflected(&got) {
		t.Errorf("unexpected back-off status %+v", got)
	}
}

// TestPodStatusAddresses: the remote pod's IPs reach the local status
// translated by the fabric's mapping of the provider's networks; an
// address outside them (here IPv6) is kept.
func TestPodStatusAddresses(t *testing.T) {
	remote := corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.244.0.7",
		PodIPs: []corev1.PodIP{{IP: "10.244.0.7"}, {IP: "fd00::7"}}}
	peer, err := ipam.NewMapping([]string{"10.244.0.0/16"}, []string{"10.71.0.0/16"})
	if err != nil {
		t.Fatal(err)
	}
	got := PodStatus(&corev1.PodStatus{}, &remote, "127.0.0.1", Addresses{Peer: peer}, nil)
	if got.PodIP != "10.71.0.7" || len(got.PodIPs) != 2 || got.PodIPs[0].IP != "10.71.0.7" || got.PodIPs[1].IP != "fd00::7" {
		t.Errorf("pod IPs %q %v, want the remote ones as the consumer reaches them", got.PodIP, got.PodIPs)
	}
	if remote.PodIP != "10.244.0.7" || remote.PodIPs[0].IP != "10.244.0.7" {
		t.Errorf("the remote status was modified: %v", remote)
	}
	if got := PodStatus(&corev1.PodStatus{}, &remote, "", Addresses{}, nil); got.PodIP != "10.244.0.7" {
		t.Errorf("without the fabric the pod IP is the remote one, got %q", got.PodIP)
	}
}
