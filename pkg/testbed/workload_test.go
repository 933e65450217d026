package testbed

import (
	"github.com/liqo-go/liqo/test/harness"

	"context"
	"net/netip"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// TestDeploymentAndService runs, in both clusters at once, a Deployment of 10
// replicas on the simulated nodes and checks that its Service gets an
// EndpointSlice with the 10 pod addresses.
func TestDeploymentAndService(t *testing.T) {
	podCIDR := netip.MustParsePrefix("10.244.0.0/16")
	for _, c := range shared.Clusters {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cs := c.Client()
			ns := createNamespace(ctx, t, cs, "deploy")
			labels := map[string]string{"app": "web"}

			dep := &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
				Spec: appsv1.DeploymentSpec{
					Replicas: ptr.To[int32](10),
					Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec: corev1.PodSpec{Containers: []corev1.Container{{
							Name: "web", Image: "nginx",
							Ports: []corev1.ContainerPort{{ContainerPort: 80}},
						}}},
					},
				},
			}
			if _, err := cs.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			svc := &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
				Spec:       corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 80}}},
			}
			if _, err := cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}

			var podIPs map[string]bool
			harness.Eventually(ctx, t, "10 Running pods with pod IPs", func() (bool, error) {
				pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
				if err != nil {
					return false, err
				}
				podIPs = map[string]bool{}
				for _, p := range pods.Items {
					if p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" && p.Spec.NodeName != "" {
						podIPs[p.Status.PodIP] = true
					}
				}
				return len(podIPs) == 10, nil
			})
			for ip := range podIPs {
				if addr, err := netip.ParseAddr(ip); err != nil || !podCIDR.Contains(addr) {
					t.Errorf("pod IP %s is not in %s", ip, podCIDR)
				}
			}

			harness.Eventually(ctx, t, "an EndpointSlice with the 10 pod addresses", func() (bool, error) {
				slices, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{
					LabelSelector: discoveryv1.LabelServiceName + "=web",
				})
				if err != nil {
					return false, err
				}
				got := map[string]bool{}
				for _, s := range slices.Items {
					for _, ep := range s.Endpoints {
						for _, a := range ep.Addresses {
							got[a] = true
						}
					}
				}
				if len(got) != len(podIPs) {
					return false, nil
				}
				for ip := range podIPs {
					if !got[ip] {
						return false, nil
					}
				}
				return true, nil
			})
		})
	}
}

func createNamespace(ctx context.Context, t *testing.T, cs kubernetes.Interface, prefix string) string {
	t.Helper()
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ns.Name
}
