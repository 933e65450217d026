package testbed

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// MetricsServerImage is the image of metrics-server, built here from the
// pinned release and served by the testbed's registry.
func MetricsServerImage(v Versions) string {
	return "registry.k8s.io/metrics-server/metrics-server:" + v.MetricsServer
}

// metricsServerName names metrics-server's objects in kube-system, and
// the DNS name of its Service its serving certificate is for.
const (
	metricsServerName = "metrics-server"
	metricsServerDNS  = metricsServerName + ".kube-system.svc"
)

// metricsServerObjects are metrics-server's objects: its rights (read the
// kubelets' resource metrics, pods and nodes; delegate authentication and
// authorization to the API server), its Deployment on the real nodes, its
// Service, and the APIService that makes the API server proxy
// metrics.k8s.io to it. Every certificate is verified: its serving one is
// issued by the cluster CA (the APIService's caBundle), and it verifies the
// kubelets' against the cluster CA (the kube-root-ca.crt ConfigMap of every
// namespace), which signs both the real kubelets' certificates and those
// the kubelet-serving signer issues (the virtual kubelets'). Simulated
// nodes run no kubelet it could scrape and are left out.
func metricsServerObjects(image string, caPEM, certPEM, keyPEM []byte) []client.Object {
	const ns = "kube-system"
	labels := map[string]string{"k8s-app": metricsServerName}
	readMetrics := []rbacv1.PolicyRule{{APIGroups: []string{"metrics.k8s.io"}, Resources: []string{"pods", "nodes"}, Verbs: []string{"get", "list", "watch"}}}
	apiService := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1",
		"kind":       "APIService",
		"metadata":   map[string]any{"name": "v1beta1.metrics.k8s.io", "labels": map[string]any{"k8s-app": metricsServerName}},
		"spec": map[string]any{
			"group": "metrics.k8s.io", "version": "v1beta1",
			"service":              map[string]any{"name": metricsServerName, "namespace": ns, "port": int64(443)},
			"caBundle":             base64.StdEncoding.EncodeToString(caPEM),
			"groupPriorityMinimum": int64(100), "versionPriority": int64(100),
		},
	}}
	binding := func(kind, role, name, namespace string) client.Object {
		subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: metricsServerName, Namespace: ns}}
		ref := rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: role}
		if namespace != "" {
			return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, RoleRef: ref, Subjects: subjects}
		}
		return &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, RoleRef: ref, Subjects: subjects}
	}
	return []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: metricsServerName, Namespace: ns}},
		// kubectl top for whoever may view, edit or administer.
		&rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "system:aggregated-metrics-reader", Labels: map[string]string{
				"rbac.authorization.k8s.io/aggregate-to-view": "true", "rbac.authorization.k8s.io/aggregate-to-edit": "true",
				"rbac.authorization.k8s.io/aggregate-to-admin": "true"}},
			Rules: readMetrics,
		},
		&rbacv1.ClusterRole{
			ObjectMeta: metav1.ObjectMeta{Name: "system:metrics-server"},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{""}, Resources: []string{"nodes/metrics"}, Verbs: []string{"get"}},
				{APIGroups: []string{""}, Resources: []string{"pods", "nodes"}, Verbs: []string{"get", "list", "watch"}},
			},
		},
		binding("ClusterRole", "system:metrics-server", "system:metrics-server", ""),
		binding("ClusterRole", "system:auth-delegator", "metrics-server:system:auth-delegator", ""),
		binding("Role", "extension-apiserver-authentication-reader", "metrics-server-auth-reader", ns),
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: metricsServerName + "-serving", Namespace: ns},
			Type:       corev1.SecretTypeTLS,
			Data:       map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM},
		},
		&corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: metricsServerName, Namespace: ns, Labels: labels},
			Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{
				{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("https")}}},
		},
		&appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: metricsServerName, Namespace: ns, Labels: labels},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr.To[int32](1),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{
						ServiceAccountName: metricsServerName,
						PriorityClassName:  "system-cluster-critical",
						NodeSelector:       map[string]string{NodeTypeLabel: RealNodeType},
						Containers: []corev1.Container{{
							Name:  metricsServerName,
							Image: image,
							Args: []string{
								"--secure-port=10250",
								"--tls-cert-file=/etc/metrics-server/tls.crt",
								"--tls-private-key-file=/etc/metrics-server/tls.key",
								"--kubelet-certificate-authority=/etc/kubernetes/ca/ca.crt",
								"--kubelet-preferred-address-types=InternalIP",
								"--kubelet-use-node-status-port",
								"--node-selector=" + NodeTypeLabel + "!=kwok",
								"--metric-resolution=15s",
							},
							Ports: []corev1.ContainerPort{{Name: "https", ContainerPort: 10250, Protocol: corev1.ProtocolTCP}},
							ReadinessProbe: &corev1.Probe{
								ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString("https"), Scheme: corev1.URISchemeHTTPS}},
								PeriodSeconds: 5,
							},
							VolumeMounts: []corev1.VolumeMount{
								{Name: "serving", MountPath: "/etc/metrics-server", ReadOnly: true},
								{Name: "ca", MountPath: "/etc/kubernetes/ca", ReadOnly: true},
							},
						}},
						Volumes: []corev1.Volume{
							{Name: "serving", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: metricsServerName + "-serving"}}},
							{Name: "ca", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
								LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}}}},
						},
					},
				},
			},
		},
		apiService,
	}
}

// deployMetricsServer issues metrics-server's serving certificate and
// creates its objects (kept if they exist). It does not wait for it:
// metrics-server is ready after its first scrape, and kubectl top says
// when it is not yet.
func (c *Cluster) deployMetricsServer(ctx context.Context) error {
	if !c.Spec.MetricsServer {
		return nil
	}
	serving := &x509.Certificate{
		Subject:     pkix.Name{CommonName: metricsServerDNS},
		DNSNames:    []string{metricsServerDNS},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	certPEM, keyPEM, err := c.pki.issue(serving, c.pki.path("metrics-server.crt"), c.pki.path("metrics-server.key"))
	if err != nil {
		return err
	}
	return c.createObjects(ctx, "metrics-server", metricsServerObjects(MetricsServerImage(c.bins.Versions), c.pki.caPEM, certPEM, keyPEM))
}
