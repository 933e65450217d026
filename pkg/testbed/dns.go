package testbed

import (
	"context"
	"fmt"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/liqo-go/liqo/deploy/charts/liqo/crds"
)

// CoreDNSImage is the image of the cluster DNS, built here from the pinned
// CoreDNS release and served by the testbed's registry.
func CoreDNSImage(v Versions) string { return "registry.k8s.io/coredns/coredns:" + v.CoreDNS }

// corefile serves cluster.local, the Multi-Cluster Services zone
// clusterset.local (CoreDNS's own multicluster option: the ServiceImports
// and the EndpointSlices labelled multicluster.kubernetes.io/service-name
// that package mcs writes) and reverse lookups from the API, and nothing
// else: no `forward`, so no query ever leaves the machine. Answers, "no
// such name" included, are kept DNSTTL, not kubeadm's 30 s: a name asked just
// before its import exists, or an endpoint change, shows within seconds.
var corefile = `.:53 {
    errors
    health {
        lameduck 5s
    }
    ready
    kubernetes cluster.local ` + ClustersetZone + ` in-addr.arpa ip6.arpa {
        pods insecure
        multicluster ` + ClustersetZone + `
        fallthrough in-addr.arpa ip6.arpa
        ttl ` + dnsTTL + `
    }
    cache ` + dnsTTL + `
    loop
    loadbalance
}
`

// DNSTTL is how long the cluster DNS keeps an answer (the kubernetes
// plugin's ttl and the cache's lifetime).
const DNSTTL = 5 * time.Second

var dnsTTL = strconv.Itoa(int(DNSTTL.Seconds()))

// ClustersetZone is the DNS zone of the imported multi-cluster Services.
const ClustersetZone = "clusterset.local"

// dnsObjects are kubeadm's CoreDNS objects, with the Deployment pinned to
// the real nodes (a simulated node would only pretend to run it).
func dnsObjects(image string) []client.Object {
	labels := map[string]string{"k8s-app": "kube-dns"}
	const ns = "kube-system"
	return []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "coredns", Namespace: ns}},
		&rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "system:coredns"},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"endpoints", "services", "pods", "namespaces"}, Verbs: []string{"list", "watch"}},
				{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list", "watch"}},
				{APIGroups: []string{mcsv1beta1.GroupName}, Resources: []string{"serviceimports"}, Verbs: []string{"list", "watch"}},
			},
		},
		&rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "system:coredns"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:coredns"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "coredns", Namespace: ns}},
		},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "coredns", Namespace: ns}, Data: map[string]string{"Corefile": corefile}},
		&appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "coredns", Namespace: ns, Labels: labels},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{
						ServiceAccountName: "coredns",
						PriorityClassName:  "system-cluster-critical",
						DNSPolicy:          corev1.DNSDefault,
						NodeSelector:       map[string]string{NodeTypeLabel: RealNodeType},
						Tolerations:        []corev1.Toleration{{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists}},
						Containers: []corev1.Container{{
							Name:  "coredns",
							Image: image,
							Args:  []string{"-conf", "/etc/coredns/Corefile"},
							Ports: []corev1.ContainerPort{
								{Name: "dns", ContainerPort: 53, Protocol: corev1.ProtocolUDP},
								{Name: "dns-tcp", ContainerPort: 53, Protocol: corev1.ProtocolTCP},
							},
							VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/coredns", ReadOnly: true}},
							ReadinessProbe: &corev1.Probe{
								ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8181)}},
								PeriodSeconds: 2,
							},
							LivenessProbe: &corev1.Probe{
								ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/health", Port: intstr.FromInt32(8080)}},
								InitialDelaySeconds: 60,
							},
						}},
						Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
							ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "coredns"}},
						}}},
					},
				},
			},
		},
		&corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "kube-dns", Namespace: ns, Labels: labels},
			Spec: corev1.ServiceSpec{
				Selector:  labels,
				ClusterIP: dnsServiceIP,
				Ports: []corev1.ServicePort{
					{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromInt32(53)},
					{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(53)},
				},
			},
		},
	}
}

// deployDNS creates the cluster DNS objects (kept if they exist), after
// the Multi-Cluster Services CRDs: CoreDNS's multicluster option watches
// ServiceImports and is not ready until it has listed them.
func (c *Cluster) deployDNS(ctx context.Context) error {
	if err := crds.Install(ctx, c.Config, mcsv1beta1.GroupName); err != nil {
		return fmt.Errorf("installing the Multi-Cluster Services CRDs: %w", err)
	}
	return c.createObjects(ctx, "the cluster DNS", dnsObjects(CoreDNSImage(c.bins.Versions)))
}

// waitDNSReady is true once CoreDNS is available.
func (c *Cluster) waitDNSReady(ctx context.Context) error {
	d, err := c.Client().AppsV1().Deployments("kube-system").Get(ctx, "coredns", metav1.GetOptions{})
	if err != nil {
		return err
	}
	if d.Status.AvailableReplicas < 1 {
		return fmt.Errorf("CoreDNS not available yet (%d of 1 replicas)", d.Status.AvailableReplicas)
	}
	return nil
}
