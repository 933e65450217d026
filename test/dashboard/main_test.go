// Package dashboard tests `liqoctl dashboard` against three testbed
// clusters (rome consuming from milan and from naples, networking off,
// each with its controller manager in-process): the JSON API's facts, and
// the page in headless Chromium (topology, keyboard, accessibility, no
// request leaving the machine, live changes), which also writes the
// screenshot of the README's tour.
package dashboard

import (
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager"
	"github.com/liqo-go/liqo/pkg/liqoctl"
	"github.com/liqo-go/liqo/pkg/liqoctl/dashboard"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/inprocess"
)

var (
	tb          *testbed.Testbed
	kubeconfigs = map[string]string{}
	// allContexts is one kubeconfig with a context per cluster, as the
	// dashboard's user has.
	allContexts string
	server      *dashboard.Server
)

// The names of the test's objects.
const (
	offloadedNS = "shop"
	twinNS      = "shop-rome"
	// healthCheck and grace: how fast rome sees milan's API server frozen.
	healthCheck = time.Second
	grace       = 10 * time.Second
)

func TestMain(m *testing.M) {
	names := []string{"rome", "milan", "naples"}
	specs := make([]testbed.ClusterSpec, 0, len(names))
	for _, n := range names {
		specs = append(specs, testbed.ClusterSpec{Name: n, Nodes: []testbed.NodePool{{Prefix: "worker", Count: 2, CPU: "8", Memory: "32Gi", Pods: 110}}})
	}
	var stop context.CancelFunc
	testbed.Main(m, func(t *testbed.Testbed) {
		tb = t
		testbed.Must(tb, setup(names))
		var ctx context.Context
		ctx, stop = context.WithCancel(context.Background())
		var err error
		server, err = dashboard.Start(ctx, dashboard.Options{Kubeconfig: allContexts, Namespace: consts.DefaultNamespace, Timeout: 15 * time.Second})
		testbed.Must(tb, err)
	}, specs...)
	if stop != nil {
		stop()
	}
}

// setup runs the managers, writes the kubeconfigs, peers rome with milan
// and naples, offloads rome's namespace shop and starts its pods.
func setup(names []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir, err := tb.LogDir("liqo-dashboard-")
	if err != nil {
		return err
	}
	for _, n := range names {
		mgr, err := inprocess.Start(ctx, tb.Cluster(n), dir, func(o *controllermanager.Options) error {
			o.HealthCheckInterval = healthCheck
			o.ProviderUnreachableGrace = grace
			o.IPAM.PodCIDR = netip.MustParsePrefix("10.244.0.0/16")
			return nil
		})
		if err != nil {
			return fmt.Errorf("controller manager of %s: %w", n, err)
		}
		kubeconfigs[n] = mgr.Kubeconfig
	}
	rules := &clientcmd.ClientConfigLoadingRules{Precedence: []string{kubeconfigs["rome"], kubeconfigs["milan"], kubeconfigs["naples"]}}
	merged, err := rules.Load()
	if err != nil {
		return err
	}
	allContexts = filepath.Join(dir, "all.kubeconfig")
	if err := clientcmd.WriteToFile(*merged, allContexts); err != nil {
		return err
	}
	for _, p := range []string{"milan", "naples"} {
		if err := liqo(ctx, "peer", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs[p], "--networking-disabled",
			"--cpu", "4", "--memory", "8Gi", "--pods", "30"); err != nil {
			return err
		}
	}
	rome := tb.Cluster("rome").Client()
	if _, err := rome.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: offloadedNS}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := liqo(ctx, "offload", "namespace", offloadedNS, "--kubeconfig", kubeconfigs["rome"], "--timeout", "60s"); err != nil {
		return err
	}
	for _, pod := range []*corev1.Pod{
		testPod("web-local", nil, false),
		testPod("web-milan", map[string]string{consts.RemoteClusterIDLabel: "milan"}, false),
		// naples's pod policy refuses privileged containers: rome's pod
		// stays Pending with naples's reason.
		testPod("privileged-naples", map[string]string{consts.RemoteClusterIDLabel: "naples"}, true),
	} {
		if _, err := rome.CoreV1().Pods(offloadedNS).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating pod %s: %w", pod.Name, err)
		}
	}
	return nil
}

// testPod is a pod of the offloaded namespace: on the virtual node that
// selector picks, or on rome's own nodes when it is nil.
func testPod(name string, selector map[string]string, privileged bool) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: offloadedNS},
		Spec: corev1.PodSpec{
			NodeSelector: selector,
			Containers: []corev1.Container{{Name: "app", Image: "busybox",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi")}}}},
		},
	}
	if privileged {
		pod.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	}
	if selector == nil {
		pod.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: consts.TypeLabel, Operator: corev1.NodeSelectorOpDoesNotExist}},
			}}},
		}}
	}
	return pod
}

func liqo(ctx context.Context, args ...string) error {
	out, err := liqoctl.Execute(ctx, args...)
	if err != nil {
		return fmt.Errorf("liqoctl %v: %w\n%s", args, err, out)
	}
	return nil
}
