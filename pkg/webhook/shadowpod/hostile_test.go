package shadowpod_test

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
)

// hostileCase is one thing issue 15's probe (or a worse consumer) asked of
// a provider in a ShadowPod: edit turns a plain ShadowPod into the hostile
// one, and the refusal must name field.
type hostileCase struct {
	name  string
	edit  func(sp *offv1beta1.ShadowPod)
	field string
}

func onContainer(edit func(c *corev1.Container)) func(*offv1beta1.ShadowPod) {
	return func(sp *offv1beta1.ShadowPod) { edit(&sp.Spec.Pod.Containers[0]) }
}

func withSecurityContext(edit func(sc *corev1.SecurityContext)) func(*offv1beta1.ShadowPod) {
	return onContainer(func(c *corev1.Container) {
		if c.SecurityContext == nil {
			c.SecurityContext = &corev1.SecurityContext{}
		}
		edit(c.SecurityContext)
	})
}

func withPodSecurityContext(edit func(sc *corev1.PodSecurityContext)) func(*offv1beta1.ShadowPod) {
	return func(sp *offv1beta1.ShadowPod) {
		if sp.Spec.Pod.SecurityContext == nil {
			sp.Spec.Pod.SecurityContext = &corev1.PodSecurityContext{}
		}
		edit(sp.Spec.Pod.SecurityContext)
	}
}

func withVolume(src corev1.VolumeSource) func(*offv1beta1.ShadowPod) {
	return func(sp *offv1beta1.ShadowPod) {
		sp.Spec.Pod.Volumes = append(sp.Spec.Pod.Volumes, corev1.Volume{Name: "v", VolumeSource: src})
	}
}

func withAnnotation(key, value string) func(*offv1beta1.ShadowPod) {
	return func(sp *offv1beta1.ShadowPod) {
		if sp.Annotations == nil {
			sp.Annotations = map[string]string{}
		}
		sp.Annotations[key] = value
	}
}

func withLabel(key, value string) func(*offv1beta1.ShadowPod) {
	return func(sp *offv1beta1.ShadowPod) {
		if sp.Labels == nil {
			sp.Labels = map[string]string{}
		}
		sp.Labels[key] = value
	}
}

func withToleration(tol corev1.Toleration) func(*offv1beta1.ShadowPod) {
	return func(sp *offv1beta1.ShadowPod) { sp.Spec.Pod.Tolerations = append(sp.Spec.Pod.Tolerations, tol) }
}

func withAffinity(a corev1.Affinity) func(*offv1beta1.ShadowPod) {
	return func(sp *offv1beta1.ShadowPod) { sp.Spec.Pod.Affinity = &a }
}

// baselineCases break the Pod Security Standards' baseline level, which twin
// namespaces enforce by default.
var baselineCases = []hostileCase{
	{"a privileged container", withSecurityContext(func(sc *corev1.SecurityContext) { sc.Privileged = ptr.To(true) }),
		"spec.pod.containers[0].securityContext.privileged"},
	{"a privileged init container", func(sp *offv1beta1.ShadowPod) {
		sp.Spec.Pod.InitContainers = []corev1.Container{{Name: "setup", Image: "busybox",
			SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}}
	}, "spec.pod.initContainers[0].securityContext.privileged"},
	{"SYS_ADMIN", withSecurityContext(func(sc *corev1.SecurityContext) {
		sc.Capabilities = &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE", "SYS_ADMIN"}}
	}), "spec.pod.containers[0].securityContext.capabilities.add"},
	{"NET_RAW", withSecurityContext(func(sc *corev1.SecurityContext) {
		sc.Capabilities = &corev1.Capabilities{Add: []corev1.Capability{"NET_RAW"}}
	}), "NET_RAW"},
	{"a hostPath of /", withVolume(corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}),
		"spec.pod.volumes[0].hostPath"},
	{"a hostPort", onContainer(func(c *corev1.Container) {
		c.Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 80}}
	}), "spec.pod.containers[0].ports[0].hostPort"},
	{"hostNetwork", func(sp *offv1beta1.ShadowPod) { sp.Spec.Pod.HostNetwork = true }, "spec.pod.hostNetwork"},
	{"hostPID", func(sp *offv1beta1.ShadowPod) { sp.Spec.Pod.HostPID = true }, "spec.pod.hostPID"},
	{"hostIPC", func(sp *offv1beta1.ShadowPod) { sp.Spec.Pod.HostIPC = true }, "spec.pod.hostIPC"},
	{"an unmasked /proc", withSecurityContext(func(sc *corev1.SecurityContext) { sc.ProcMount = ptr.To(corev1.UnmaskedProcMount) }),
		"spec.pod.containers[0].securityContext.procMount"},
	{"an unconfined pod seccomp profile", withPodSecurityContext(func(sc *corev1.PodSecurityContext) {
		sc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
	}), "spec.pod.securityContext.seccompProfile.type"},
	{"an unconfined container seccomp profile", withSecurityContext(func(sc *corev1.SecurityContext) {
		sc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
	}), "spec.pod.containers[0].securityContext.seccompProfile.type"},
	{"an unconfined seccomp annotation", withAnnotation("seccomp.security.alpha.kubernetes.io/pod", "unconfined"),
		"metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]"},
	{"an unconfined AppArmor profile", withSecurityContext(func(sc *corev1.SecurityContext) {
		sc.AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
	}), "spec.pod.containers[0].securityContext.appArmorProfile.type"},
	{"an unconfined AppArmor annotation", withAnnotation("container.apparmor.security.beta.kubernetes.io/app", "unconfined"),
		"metadata.annotations[container.apparmor.security.beta.kubernetes.io/app]"},
	{"the SELinux type of a privileged container", withPodSecurityContext(func(sc *corev1.PodSecurityContext) {
		sc.SELinuxOptions = &corev1.SELinuxOptions{Type: "spc_t"}
	}), "spec.pod.securityContext.seLinuxOptions.type"},
	{"an SELinux user", withSecurityContext(func(sc *corev1.SecurityContext) {
		sc.SELinuxOptions = &corev1.SELinuxOptions{User: "system_u"}
	}), "spec.pod.containers[0].securityContext.seLinuxOptions.user"},
	{"an unsafe sysctl", withPodSecurityContext(func(sc *corev1.PodSecurityContext) {
		sc.Sysctls = []corev1.Sysctl{{Name: "net.ipv4.tcp_syncookies", Value: "1"}, {Name: "kernel.core_pattern", Value: "|/tmp/x"}}
	}), "spec.pod.securityContext.sysctls[1]"},
	{"a Windows host process", withPodSecurityContext(func(sc *corev1.PodSecurityContext) {
		sc.WindowsOptions = &corev1.WindowsSecurityContextOptions{HostProcess: ptr.To(true)}
	}), "spec.pod.securityContext.windowsOptions.hostProcess"},
	{"a probe aimed at another host", onContainer(func(c *corev1.Container) {
		c.LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Host: "169.254.169.254", Path: "/"}}}
	}), "spec.pod.containers[0].livenessProbe.httpGet.host"},
	{"a lifecycle hook aimed at another host", onContainer(func(c *corev1.Container) {
		c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{TCPSocket: &corev1.TCPSocketAction{Host: "10.0.0.1"}}}
	}), "spec.pod.containers[0].lifecycle.preStop.tcpSocket.host"},
}

// providerCases ask for what Pod Security Admission does not cover: the
// provider's nodes, its priorities and runtimes, its credentials, and what
// other systems on the provider act upon.
var providerCases = []hostileCase{
	{"a nodeName", func(sp *offv1beta1.ShadowPod) { sp.Spec.Pod.NodeName = "worker-0" }, "spec.pod.nodeName"},
	{"a nodeSelector for a control-plane node", func(sp *offv1beta1.ShadowPod) {
		sp.Spec.Pod.NodeSelector = map[string]string{"node-role.kubernetes.io/control-plane": ""}
	}, "spec.pod.nodeSelector"},
	{"a hostname node affinity", withAffinity(corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{"cp-0"}}}}}}}}),
		"spec.pod.affinity.nodeAffinity"},
	{"a node name through matchFields", withAffinity(corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"cp-0"}}}}}}}}),
		"spec.pod.affinity.nodeAffinity"},
	{"a preferred node affinity", withAffinity(corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 100, Preference: corev1.NodeSelectorTerm{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.NodeSelectorOpExists}}}}}}}),
		"spec.pod.affinity.nodeAffinity"},
	{"a pod affinity reaching every namespace", withAffinity(corev1.Affinity{PodAffinity: &corev1.PodAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "kubernetes.io/hostname",
			LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{"component": "kube-apiserver"}},
			NamespaceSelector: &metav1.LabelSelector{}}}}}),
		"spec.pod.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].namespaceSelector"},
	{"a pod anti-affinity naming another namespace", withAffinity(corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: corev1.PodAffinityTerm{
			TopologyKey: "kubernetes.io/hostname", Namespaces: []string{"kube-system"}}}}}}),
		"spec.pod.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.namespaces"},
	{"a toleration of everything", withToleration(corev1.Toleration{Operator: corev1.TolerationOpExists}), "spec.pod.tolerations[0]"},
	{"a toleration of the control plane", withToleration(corev1.Toleration{Key: "node-role.kubernetes.io/control-plane",
		Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}), "spec.pod.tolerations[0]"},
	{"a toleration of masters", withToleration(corev1.Toleration{Key: "node-role.kubernetes.io/master",
		Operator: corev1.TolerationOpExists}), "node-role.kubernetes.io/master"},
	{"a toleration of cordoned nodes", withToleration(corev1.Toleration{Key: "node.kubernetes.io/unschedulable",
		Operator: corev1.TolerationOpExists}), "node.kubernetes.io/unschedulable"},
	{"a toleration of the provider's own virtual nodes", withToleration(corev1.Toleration{Key: consts.VirtualNodeTaintKey,
		Operator: corev1.TolerationOpExists}), consts.VirtualNodeTaintKey},
	// Nodes the provider dedicates to some workloads (issue 30, finding
	// 8): its GPU nodes without asking for a GPU, its system pool.
	{"a toleration of GPU nodes without a GPU", withToleration(corev1.Toleration{Key: "nvidia.com/gpu",
		Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}), "spec.pod.tolerations[0] must not tolerate nvidia.com/gpu"},
	{"a toleration of the system pool", withToleration(corev1.Toleration{Key: "CriticalAddonsOnly",
		Operator: corev1.TolerationOpExists}), "--dedicated-taint-keys"},
	// Devices through dynamic resource allocation, which no Quota counts.
	{"a resource claim", func(sp *offv1beta1.ShadowPod) {
		sp.Spec.Pod.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("gpu-template")}}
		sp.Spec.Pod.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
	}, "spec.pod.resourceClaims must be empty"},
	{"a container's resource claim", onContainer(func(c *corev1.Container) {
		c.Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
	}), "spec.pod.containers[0].resources.claims"},
	{"another scheduler", func(sp *offv1beta1.ShadowPod) { sp.Spec.Pod.SchedulerName = "my-scheduler" }, "spec.pod.schedulerName"},
	{"a system priority class", func(sp *offv1beta1.ShadowPod) { sp.Spec.Pod.PriorityClassName = "system-node-critical" },
		"spec.pod.priorityClassName"},
	{"a priority value", func(sp *offv1beta1.ShadowPod) { sp.Spec.Pod.Priority = ptr.To(int32(2000001000)) }, "spec.pod.priority"},
	{"a runtime class not offered", func(sp *offv1beta1.ShadowPod) { sp.Spec.Pod.RuntimeClassName = ptr.To("runc-privileged") },
		"spec.pod.runtimeClassName"},
	{"a system priority class by another name", func(sp *offv1beta1.ShadowPod) { sp.Spec.Pod.PriorityClassName = "system-anything" },
		"spec.pod.priorityClassName"},
	{"a provider ServiceAccount", func(sp *offv1beta1.ShadowPod) { sp.Spec.Pod.ServiceAccountName = "liqo-controller-manager" },
		"spec.pod.serviceAccountName"},
	{"a provider ServiceAccount by its deprecated field", func(sp *offv1beta1.ShadowPod) { sp.Spec.Pod.DeprecatedServiceAccount = "builder" },
		"spec.pod.serviceAccount"},
	{"the default ServiceAccount's token", func(sp *offv1beta1.ShadowPod) {
		sp.Spec.Pod.ServiceAccountName = "default"
		sp.Spec.Pod.AutomountServiceAccountToken = ptr.To(true)
	}, "spec.pod.automountServiceAccountToken"},
	{"a projected provider token", withVolume(corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
		{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}),
		"spec.pod.volumes[0].projected.sources[0].serviceAccountToken"},
	{"an NFS volume", withVolume(corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "10.0.0.5", Path: "/exports"}}),
		"spec.pod.volumes[0].nfs"},
	{"an inline CSI volume", withVolume(corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{Driver: "secrets-store.csi.k8s.io"}}),
		"spec.pod.volumes[0].csi"},
	{"an ephemeral volume claiming a given volume", withVolume(corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
		VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, VolumeName: "pv-of-another-tenant",
			Resources: corev1.VolumeResourceRequirements{Requests: webhooktest.List("storage", "1Gi")}}}}}),
		"spec.pod.volumes[0].ephemeral.volumeClaimTemplate.spec.volumeName"},
	{"an ephemeral volume of the provider's virtual class", withVolume(corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{
		VolumeClaimTemplate: &corev1.PersistentVolumeClaimTemplate{Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: ptr.To("liqo"),
			Resources: corev1.VolumeResourceRequirements{Requests: webhooktest.List("storage", "1Gi")}}}}}),
		"spec.pod.volumes[0].ephemeral.volumeClaimTemplate.spec.storageClassName"},
	{"a Multus network", withAnnotation("k8s.v1.cni.cncf.io/networks", "kube-system/host-bridge"),
		"metadata.annotations[k8s.v1.cni.cncf.io/networks]"},
	{"a Multus default network", withAnnotation("v1.multus-cni.io/default-network", "kube-system/underlay"),
		"metadata.annotations[v1.multus-cni.io/default-network]"},
	{"a Calico address", withAnnotation("cni.projectcalico.org/ipAddrs", `["10.0.0.1"]`),
		"metadata.annotations[cni.projectcalico.org/ipAddrs]"},
	{"a Kubernetes annotation the autoscaler acts on", withAnnotation("cluster-autoscaler.kubernetes.io/safe-to-evict", "false"),
		"metadata.annotations[cluster-autoscaler.kubernetes.io/safe-to-evict]"},
	// Labels the provider's systems select pods by (issue 30, finding 6):
	// an admission controller injecting the provider's agent, liqo's own.
	{"a label asking the provider's Datadog admission for its agent", withLabel("admission.datadoghq.com/enabled", "true"),
		"metadata.labels[admission.datadoghq.com/enabled]"},
	{"a label of liqo's", withLabel(consts.TypeLabel, "virtual-node"), "metadata.labels[liqo.io/type]"},
	{"a Kubernetes label", withLabel("node-role.kubernetes.io/control-plane", ""), "metadata.labels[node-role.kubernetes.io/control-plane]"},
	{"one of liqo's own annotations", withAnnotation("liqo.io/offloading-conflict", "x"), "metadata.annotations[liqo.io/offloading-conflict]"},
}

// TestHostileShadowPods sends, as a consumer, every hostile pod the provider
// must not run, one per rule, and checks each is refused with a message
// naming the field at fault.
func TestHostileShadowPods(t *testing.T) {
	ctx := context.Background()
	webhooktest.Consumer(t, "sigma", offv1beta1.SoftLimitsEnforcement, webhooktest.List("cpu", "10", "memory", "10Gi", "pods", "100"))
	sigma := webhooktest.AsConsumer(t, "sigma", webhooktest.Twin("sigma"))
	for i, tc := range append(append([]hostileCase{}, baselineCases...), providerCases...) {
		t.Run(tc.name, func(t *testing.T) {
			// Each its own name: one admitted by mistake must not make
			// the next fail for another reason.
			sp := webhooktest.ShadowPod(fmt.Sprintf("hostile-%d", i), webhooktest.Twin("sigma"), "sigma", "", "")
			tc.edit(sp)
			webhooktest.WantDenied(t, tc.name, sigma.Create(ctx, sp), tc.field)
		})
	}
}
