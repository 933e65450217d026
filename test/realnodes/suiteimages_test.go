package realnodes

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
	"github.com/liqo-go/liqo/test/realpods"
)

// TestSuiteImagesRun: the images the MCS conformance suite runs, by the
// names it gives them, run on a real node and do what the suite has them
// do: socat listeners behind a TCP and UDP Service answer with their pod's
// IP through the shell, and in the request pod nc reaches them by the
// Service's DNS name while bind's nslookup prints the A and SRV records in
// the form the suite parses.
func TestSuiteImagesRun(t *testing.T) {
	ctx := realpods.Timeout(t, 4*time.Minute)
	c := east
	cs := c.Client()
	ns := realpods.Namespace(ctx, t, c, "suite-images")

	labels := map[string]string{"app": "hello"}
	listener := func(proto string) corev1.Container {
		return corev1.Container{
			Name: "hello-" + strings.ToLower(proto), Image: testbed.SocatImage,
			Command: []string{"/bin/sh"},
			Args: []string{"-c", `ip=$(echo "$POD_IPS" | tr ',' ' ' | awk '{print $1}'); export ip; ` +
				`exec socat -v ` + proto + `-LISTEN:42,crlf,reuseaddr,fork SYSTEM:'echo "pod ip $ip"'`},
			Env: []corev1.EnvVar{{Name: "POD_IPS", ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIPs"}}}},
		}
	}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: realpods.OnRealNodes, TerminationGracePeriodSeconds: ptr.To[int64](1),
					Containers: []corev1.Container{listener("TCP"), listener("UDP")},
				},
			},
		},
	}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: ns},
		Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{
			{Name: "tcp", Port: 42, Protocol: corev1.ProtocolTCP},
			{Name: "udp", Port: 42, Protocol: corev1.ProtocolUDP},
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	request := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "request", Namespace: ns, Labels: map[string]string{"app": "request"}},
		Spec: corev1.PodSpec{
			NodeSelector: realpods.OnRealNodes, TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{Name: "request", Image: testbed.NetshootImage,
				Args: []string{"/bin/sh", "-ec", "while :; do sleep 5; done"}}},
		},
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, request, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hello := realpods.RunningPods(ctx, t, c, ns, "app=hello", 1)[0]
	realpods.RunningPods(ctx, t, c, ns, "app=request", 1)

	fqdn := "hello." + ns + ".svc.cluster.local"
	exec := func(what, script string, ok func(string) bool) string {
		t.Helper()
		var out string
		harness.Eventually(ctx, t, what, func() (bool, error) {
			var err error
			out, err = realpods.Kubectl(ctx, c, "exec", "-n", ns, "request", "--", "sh", "-c", script)
			if err != nil {
				// nc exits non-zero on a refused connection while the
				// Service's rules are on their way: retry.
				t.Logf("%s: %v", what, err)
				return false, nil
			}
			return ok(out), nil
		})
		return out
	}
	want := "pod ip " + hello.Status.PodIP
	exec("nc over TCP to the socat listener", "echo hi | nc -v -w 2 -4 "+fqdn+" 42 2>&1",
		func(out string) bool { return strings.Contains(out, want) })
	exec("nc over UDP to the socat listener", "echo hi | nc -u -w 2 -4 "+fqdn+" 42 2>&1",
		func(out string) bool { return strings.Contains(out, want) })

	// The suite reads "Name: ... Address: IP" pairs and "= prio weight port
	// target" SRV lines, as bind's nslookup prints them.
	address := regexp.MustCompile(`Name:.*\s*Address:\s*(.*)`)
	out := exec("an A record from nslookup", fmt.Sprintf("nslookup -type=A %s.", fqdn), func(out string) bool {
		return len(address.FindAllStringSubmatch(out, -1)) > 0
	})
	if m := address.FindAllStringSubmatch(out, -1); len(m) != 1 || strings.TrimSpace(m[0][1]) != svc.Spec.ClusterIP {
		t.Errorf("nslookup -type=A printed %v, want the one address %s:\n%s", m, svc.Spec.ClusterIP, out)
	}
	srv := regexp.MustCompile(`=\s*\d+\s+\d+\s+(\d+)\s+([a-zA-Z0-9-.]+)`)
	out = exec("an SRV record from nslookup", fmt.Sprintf("nslookup -type=SRV _tcp._tcp.%s.", fqdn), func(out string) bool {
		return len(srv.FindAllStringSubmatch(out, -1)) > 0
	})
	if m := srv.FindAllStringSubmatch(out, -1); len(m) != 1 || m[0][1] != "42" || strings.TrimSuffix(m[0][2], ".") != fqdn {
		t.Errorf("nslookup -type=SRV printed %v, want port 42 of %s:\n%s", m, fqdn, out)
	}
}
