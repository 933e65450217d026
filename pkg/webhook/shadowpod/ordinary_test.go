package shadowpod_test

import (
	"context"
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/forge"
	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
)

// deploymentPod is a pod as a consumer's API server stores it for a
// Deployment of a web application: scheduled on the virtual node, with
// the defaults admission adds (tolerations, the kube-api-access volume),
// the annotations kubectl and Helm charts put on pod templates, and a
// securityContext of the kind charts ship.
func deploymentPod() *corev1.Pod {
	kubeAPIAccess := &corev1.ProjectedVolumeSource{DefaultMode: ptr.To[int32](0o644), Sources: []corev1.VolumeProjection{
		{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptr.To[int64](3607), Path: "token"}},
		{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
			Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
		{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{
			{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
	}}
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}}}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-7d4b9c-x2x8q", Namespace: "shop", UID: "uid-web",
			Labels: map[string]string{"app.kubernetes.io/name": "web", "pod-template-hash": "7d4b9c"},
			Annotations: map[string]string{
				"kubectl.kubernetes.io/restartedAt":                  "2025-01-01T00:00:00Z",
				"kubectl.kubernetes.io/default-container":            "web",
				"kubernetes.io/limit-ranger":                         "LimitRanger plugin set: memory request for container web",
				"checksum/config":                                    "0123456789abcdef",
				"container.apparmor.security.beta.kubernetes.io/web": "runtime/default",
				"team": "shop",
			}},
		Spec: corev1.PodSpec{
			NodeName:           "milan",
			NodeSelector:       map[string]string{"kubernetes.io/os": "linux"},
			PriorityClassName:  "shop-high",
			Priority:           ptr.To[int32](1000),
			SchedulerName:      "default-scheduler",
			ServiceAccountName: "web", DeprecatedServiceAccount: "web",
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](1000), FSGroup: ptr.To[int64](1000),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				Sysctls:        []corev1.Sysctl{{Name: "net.ipv4.ip_unprivileged_port_start", Value: "0"}}},
			Tolerations: []corev1.Toleration{
				{Key: consts.VirtualNodeTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
			},
			Volumes: []corev1.Volume{
				{Name: "kube-api-access-abcde", VolumeSource: corev1.VolumeSource{Projected: kubeAPIAccess}},
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "web"}}}},
				{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "web-tls"}}},
				{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr.To(resource.MustParse("1Gi"))}}},
				{Name: "podinfo", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
					{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}}}}}},
			},
			Containers: []corev1.Container{{
				Name: "web", Image: "registry.example/shop/web:1.2.3",
				Ports:          []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
				Env:            []corev1.EnvVar{{Name: "DB_PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "password"}}}},
				Resources:      corev1.ResourceRequirements{Requests: webhooktest.List("cpu", "250m", "memory", "256Mi"), Limits: webhooktest.List("cpu", "1", "memory", "512Mi")},
				LivenessProbe:  probe,
				ReadinessProbe: probe,
				SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
					Capabilities:    &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"NET_BIND_SERVICE"}},
					AppArmorProfile: &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeRuntimeDefault}},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "kube-api-access-abcde", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true},
					{Name: "config", MountPath: "/etc/web"}, {Name: "tls", MountPath: "/etc/tls"},
					{Name: "cache", MountPath: "/cache"}, {Name: "podinfo", MountPath: "/etc/podinfo"},
				},
			}},
		},
	}
}

// TestOrdinaryShadowPodsAdmitted checks that the policy refuses what it
// must and no more: the pods consumers actually offload are admitted, as
// the consumer's own credentials send them.
func TestOrdinaryShadowPodsAdmitted(t *testing.T) {
	ctx := context.Background()
	webhooktest.Consumer(t, "tau", offv1beta1.HardLimitsEnforcement, webhooktest.List("cpu", "10", "memory", "10Gi", "pods", "100"))
	tau := webhooktest.AsConsumer(t, "tau", webhooktest.Twin("tau"))

	// What tau's reflection makes of a Deployment's pod: the local
	// scheduling constraints, priority and ServiceAccount dropped, tokens
	// mounted from Secrets, the home API server's host alias and variables
	// added (with the network fabric).
	reflected := forge.ShadowPod(deploymentPod(), "tau", webhooktest.Twin("tau"), netip.MustParseAddr("10.70.0.1"))
	// A pod keeping constraints of its own that concern only itself: its
	// replicas spread over the provider's nodes, a custom taint tolerated,
	// Helm's checksum annotation.
	spread := webhooktest.ShadowPod("spread", webhooktest.Twin("tau"), "tau", "100m", "200m")
	spread.Labels["app"] = "spread"
	spread.Annotations = map[string]string{"checksum/secret": "abc", "description": "a replica"}
	spread.Spec.Pod.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "kubernetes.io/hostname",
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "spread"}}, Namespaces: []string{webhooktest.Twin("tau")}}}}}
	spread.Spec.Pod.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "kubernetes.io/hostname",
		WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "spread"}}}}
	spread.Spec.Pod.Tolerations = []corev1.Toleration{{Key: "example.com/batch", Operator: corev1.TolerationOpEqual, Value: "true", Effect: corev1.TaintEffectNoSchedule}}
	spread.Spec.Pod.ServiceAccountName = "default"
	spread.Spec.Pod.AutomountServiceAccountToken = ptr.To(false)
	spread.Spec.Pod.SchedulerName = "default-scheduler"

	// A StatefulSet's replica from a Helm chart, in Istio's mesh: its
	// controllers' labels, Helm's, and the mesh's (kept off the pod).
	stateful := webhooktest.ShadowPod("db-0", webhooktest.Twin("tau"), "tau", "100m", "200m")
	for k, v := range map[string]string{"app.kubernetes.io/name": "db", "helm.sh/chart": "db-1.2.3", "controller-revision-hash": "db-5f6b",
		"statefulset.kubernetes.io/pod-name": "db-0", "apps.kubernetes.io/pod-index": "0", "security.istio.io/tlsMode": "istio",
		"service.istio.io/canonical-name": "db", "sidecar.istio.io/inject": "true"} {
		stateful.Labels[k] = v
	}
	// A Job's pod.
	job := webhooktest.ShadowPod("report-x7k2p", webhooktest.Twin("tau"), "tau", "100m", "200m")
	for k, v := range map[string]string{"batch.kubernetes.io/job-name": "report", "batch.kubernetes.io/controller-uid": "uid-report",
		"job-name": "report", "controller-uid": "uid-report"} {
		job.Labels[k] = v
	}

	for _, sp := range []*offv1beta1.ShadowPod{
		webhooktest.ShadowPod("test-offload", webhooktest.Twin("tau"), "tau", "", ""), // seed 003's pod
		reflected,
		spread,
		stateful,
		job,
	} {
		if err := tau.Create(ctx, sp); err != nil {
			t.Errorf("ShadowPod %s refused: %v", sp.Name, err)
		}
	}
}
