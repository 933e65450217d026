package networking

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
	"github.com/liqo-go/liqo/test/realpods"
)

// webPod is a web server answering with its name, pinned by nodeSelector.
func webPod(ns, name string, nodeSelector map[string]string, tolerate bool) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{
			NodeSelector:                  nodeSelector,
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers:                    []corev1.Container{realpods.WebServer()},
		},
	}
	if tolerate {
		p.Spec.Tolerations = []corev1.Toleration{{Key: consts.VirtualNodeTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}
	}
	return p
}

// fetchAll fetches url from pod until every name in want answered once,
// as a client of a Service with back ends in both clusters sees them.
func fetchAll(ctx context.Context, t *testing.T, c *testbed.Cluster, ns, pod, url string, want ...string) {
	t.Helper()
	seen := map[string]bool{}
	harness.Eventually(ctx, t, url+" answered by each of "+strings.Join(want, ", "), func() (bool, error) {
		out, err := realpods.Kubectl(ctx, c, "exec", "-n", ns, pod, "--", "timeout", "5", "wget", "-q", "-O", "-", url)
		if err == nil {
			seen[strings.TrimSpace(out)] = true
		}
		for _, w := range want {
			if !seen[w] {
				return false, nil
			}
		}
		return true, nil
	})
}

// TestQuickStartConnectivity is the Quick Start's connectivity check on
// two clusters with the same pod CIDR, peered with networking: a web
// server on rome's real node and one on the virtual node (run by milan),
// one Service in front of both. From rome, a client pod reaches both pod
// IPs as kubectl shows them (the remote one remapped, outside rome's pod
// CIDR) and the Service by name reaches both back ends; from milan, the
// offloaded pod reaches rome's pod by its remapped address and the
// Service by name reaches both back ends too.
func TestQuickStartConnectivity(t *testing.T) {
	ctx := realpods.Timeout(t, 12*time.Minute)
	start := time.Now()
	out, err := liqoctlRun(ctx, "peer", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs["milan"],
		"--server-service-type", "NodePort", "--timeout", "5m")
	if err != nil {
		t.Fatalf("peer: %v\n%s", err, out)
	}
	t.Logf("liqoctl peer with networking took %s", time.Since(start).Round(time.Millisecond))

	ns := realpods.Namespace(ctx, t, rome, "liqo-demo")
	if out, err := liqoctlRun(ctx, "offload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"], "--timeout", "2m"); err != nil {
		t.Fatalf("offload: %v\n%s", err, out)
	}
	cs := rome.Client()
	for _, p := range []*corev1.Pod{
		webPod(ns, "web-local", realpods.OnRealNodes, false),
		webPod(ns, "web-remote", map[string]string{consts.TypeLabel: consts.TypeVirtualNode}, true),
	} {
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns}, Spec: corev1.ServiceSpec{
		Selector: map[string]string{"app": "web"},
		Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
	}}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ips := map[string]string{}
	for _, p := range realpods.RunningPods(ctx, t, rome, ns, "app=web", 2) {
		ips[p.Name] = p.Status.PodIP
	}
	if ip := netip.MustParseAddr(ips["web-remote"]); podCIDR.Contains(ip) {
		t.Errorf("rome shows the offloaded pod at %s, inside its own pod CIDR %s: not remapped", ip, podCIDR)
	}
	t.Logf("rome shows web-local at %s, web-remote at %s", ips["web-local"], ips["web-remote"])

	client := realpods.Client(ctx, t, rome, ns, "")
	for name, ip := range ips {
		if got := realpods.Fetch(ctx, t, rome, ns, client, "http://"+ip+":8080/"); got != name {
			t.Errorf("rome's client fetched %s at %s and got %q", name, ip, got)
		}
	}
	fetchAll(ctx, t, rome, ns, client, "http://web."+ns+".svc.cluster.local/", "web-local", "web-remote")

	// The reverse: the offloaded pod, on milan, reaches rome's pod at the
	// address milan gives it, and the Service (reflected into its twin
	// namespace) by name reaches both back ends.
	local := remapped(ctx, t, milan, "rome", ips["web-local"])
	if got := realpods.Fetch(ctx, t, rome, ns, "web-remote", "http://"+local+":8080/"); got != "web-local" {
		t.Errorf("the offloaded pod fetched rome's web-local at %s and got %q", local, got)
	}
	fetchAll(ctx, t, rome, ns, "web-remote", "http://web/", "web-local", "web-remote")

	homeAPIServer(ctx, t, ns)
	splitDeployment(ctx, t, ns, client)
}

// splitDeployment: a Deployment of two replicas that must not share a
// node lands on rome's real node and on the virtual node; the Service in
// front of it reaches both from rome (client) and from milan (the
// offloaded web-remote).
func splitDeployment(ctx context.Context, t *testing.T, ns, client string) {
	labels := map[string]string{"app": "split"}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "split", Namespace: ns}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers:                    []corev1.Container{realpods.WebServer()},
			Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: labels}, TopologyKey: corev1.LabelHostname}}}},
		}},
	}}
	cs := rome.Client()
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "split", Namespace: ns}, Spec: corev1.ServiceSpec{
		Selector: labels, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var names []string
	nodes := map[string]bool{}
	for _, p := range realpods.RunningPods(ctx, t, rome, ns, "app=split", 2) {
		names = append(names, p.Name)
		nodes[p.Spec.NodeName] = true
	}
	if !nodes["milan"] || len(nodes) != 2 {
		t.Fatalf("the replicas run on %v; want one on the virtual node milan and one on a real node", nodes)
	}
	fetchAll(ctx, t, rome, ns, client, "http://split/", names...)
	fetchAll(ctx, t, rome, ns, "web-remote", "http://split/", names...)
}

// homeAPIServer: the offloaded pod web-remote lists the pods of its
// namespace on rome's API server, as an in-cluster client would: through
// KUBERNETES_SERVICE_HOST/PORT, which name rome's API server (resolved by
// the pod's host alias to the address milan sees for its twin in rome's
// external CIDR), with the token the reflection gave it.
func homeAPIServer(ctx context.Context, t *testing.T, ns string) {
	t.Helper()
	if _, err := realpods.Kubectl(ctx, rome, "create", "role", "pod-reader", "-n", ns, "--verb=list", "--resource=pods"); err != nil {
		t.Fatal(err)
	}
	if _, err := realpods.Kubectl(ctx, rome, "create", "rolebinding", "pod-reader", "-n", ns, "--role=pod-reader",
		"--serviceaccount="+ns+":default"); err != nil {
		t.Fatal(err)
	}
	env, err := realpods.Kubectl(ctx, rome, "exec", "-n", ns, "web-remote", "--", "sh", "-c",
		`echo "$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT"; grep kubernetes.default.svc /etc/hosts`)
	if err != nil {
		t.Fatalf("reading the offloaded pod's environment: %v\n%s", err, env)
	}
	if !strings.HasPrefix(env, "kubernetes.default.svc:443\n") {
		t.Errorf("the offloaded pod's API server is %q, want kubernetes.default.svc:443", env)
	}
	t.Logf("the offloaded pod's API server and host alias:\n%s", env)
	list := `wget -q -O - --header "Authorization: Bearer $(cat /var/run/secrets/kubernetes.io/serviceaccount/token)" ` +
		`"https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT/api/v1/namespaces/` + ns + `/pods"`
	var out string
	harness.Eventually(ctx, t, "the offloaded pod listing its pods on rome's API server", func() (bool, error) {
		out, err = realpods.Kubectl(ctx, rome, "exec", "-n", ns, "web-remote", "--", "timeout", "10", "sh", "-c", list)
		return err == nil, err
	})
	for _, name := range []string{`"kind": "PodList"`, `"name": "web-local"`, `"name": "web-remote"`} {
		if !strings.Contains(out, name) {
			t.Errorf("rome's API server answered the offloaded pod without %s:\n%s", name, out)
		}
	}
}
