// Package peers tests one cluster peered with several at once, both ways:
// the consumer of five providers, then the provider of five consumers, each
// cluster running our controller manager in-process (networking disabled,
// simulated nodes). The figures for twenty are `make bench`'s peers suite.
package peers

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager"
	"github.com/liqo-go/liqo/pkg/liqoctl"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
)

// peers is how many clusters the hub peers with.
const peers = 5

var (
	tb          *testbed.Testbed
	kubeconfigs = map[string]string{}
)

func peerName(k int) string { return fmt.Sprintf("p%d", k) }

func TestMain(m *testing.M) {
	pool := []testbed.NodePool{{Prefix: "worker", Count: 1, CPU: "8", Memory: "32Gi", Pods: 110}}
	// The hub shares half its nodes, and each of its consumers asks for the
	// default slice (4 CPUs, 8Gi, 110 pods): enough for all of them.
	hubPool := []testbed.NodePool{{Prefix: "worker", Count: 2, CPU: "32", Memory: "128Gi", Pods: 600}}
	specs := []testbed.ClusterSpec{{Name: "hub", Nodes: hubPool}}
	for k := 1; k <= peers; k++ {
		specs = append(specs, testbed.ClusterSpec{Name: peerName(k), Nodes: pool})
	}
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	testbed.Main(m, func(t *testbed.Testbed) {
		tb = t
		tb.BeforeStop(func() { cancel(); wg.Wait() })
		dir, err := tb.LogDir("liqo-peers-")
		testbed.Must(tb, err)
		for _, c := range tb.Clusters {
			kubeconfigs[c.Name] = filepath.Join(dir, c.Name+".kubeconfig")
			testbed.Must(tb, c.WriteKubeconfig(kubeconfigs[c.Name]))
			log, err := os.Create(filepath.Join(dir, c.Name+"-controller-manager.log"))
			testbed.Must(tb, err)
			o := controllermanager.DefaultOptions()
			o.ClusterID = c.Name
			o.IPAM.PodCIDR = netip.MustParsePrefix("10.244.0.0/16") // every testbed cluster's
			o.Logger = zap.New(zap.WriteTo(log), zap.UseDevMode(true))
			wg.Go(func() {
				defer log.Close()
				controllermanager.RunLocal(ctx, c.Config, o, func(err error) { o.Logger.Error(err, "controller manager stopped; restarting") })
			})
		}
		for _, c := range tb.Clusters {
			testbed.Must(tb, factory.WaitForComponents(context.Background(), kubeconfigs[c.Name], consts.DefaultNamespace, 2*time.Minute))
		}
	}, specs...)
}

func liqoctlOK(ctx context.Context, t *testing.T, args ...string) {
	t.Helper()
	if out, err := liqoctl.Execute(ctx, args...); err != nil {
		t.Fatalf("liqoctl %v: %v\n%s", args, err, out)
	}
}

func peerArgs(consumer, provider string) []string {
	return []string{"--kubeconfig", kubeconfigs[consumer], "--remote-kubeconfig", kubeconfigs[provider]}
}

// pinnedPod is a pod of ns bound by its node selector to the virtual node
// of provider.
func pinnedPod(ns, provider string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "on-" + provider, Namespace: ns},
		Spec: corev1.PodSpec{NodeSelector: map[string]string{consts.RemoteClusterIDLabel: provider},
			Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
	}
}

// waitRunning waits until the pod runs, and returns its UID.
func waitRunning(ctx context.Context, t *testing.T, c *testbed.Cluster, ns, name string) string {
	t.Helper()
	var uid string
	harness.Eventually(ctx, t, fmt.Sprintf("pod %s/%s Running on %s", ns, name, c.Name), func() (bool, error) {
		p, err := c.Client().CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		uid = string(p.UID)
		return err == nil && p.Status.Phase == corev1.PodRunning, err
	})
	return uid
}

// stillRunning checks that the pod is the same (UID) and Running, never
// restarted.
func stillRunning(ctx context.Context, t *testing.T, c *testbed.Cluster, ns, name, uid string) {
	t.Helper()
	p, err := c.Client().CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Errorf("pod %s/%s on %s: %v", ns, name, c.Name, err)
		return
	}
	restarts := int32(0)
	for _, s := range p.Status.ContainerStatuses {
		restarts += s.RestartCount
	}
	if string(p.UID) != uid || p.Status.Phase != corev1.PodRunning || restarts != 0 {
		t.Errorf("pod %s/%s on %s: uid %s (was %s), %s, %d restarts", ns, name, c.Name, p.UID, uid, p.Status.Phase, restarts)
	}
}

// TestOneConsumerFiveProviders: the hub peers with five providers, offloads
// a namespace to all of them with a pod on each, and unpeers the last: the
// other four pods go on, the same pods, unrestarted, on their providers too.
func TestOneConsumerFiveProviders(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	hub := tb.Cluster("hub")
	for k := 1; k <= peers; k++ {
		liqoctlOK(ctx, t, append([]string{"peer", "--networking-disabled"}, peerArgs("hub", peerName(k))...)...)
	}
	const ns = "everywhere"
	if _, err := hub.Client().CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	liqoctlOK(ctx, t, "offload", "namespace", ns, "--pod-offloading-strategy", "Remote", "--namespace-mapping-strategy", "EnforceSameName", "--kubeconfig", kubeconfigs["hub"])
	local, remote := map[string]string{}, map[string]string{}
	for k := 1; k <= peers; k++ {
		if _, err := hub.Client().CoreV1().Pods(ns).Create(ctx, pinnedPod(ns, peerName(k)), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for k := 1; k <= peers; k++ {
		name := "on-" + peerName(k)
		local[name] = waitRunning(ctx, t, hub, ns, name)
		remote[name] = waitRunning(ctx, t, tb.Cluster(peerName(k)), ns, name)
	}

	last := peerName(peers)
	liqoctlOK(ctx, t, append([]string{"unpeer"}, peerArgs("hub", last)...)...)
	time.Sleep(5 * time.Second) // what unpeering might disturb, it would have by now
	for k := 1; k < peers; k++ {
		name := "on-" + peerName(k)
		stillRunning(ctx, t, hub, ns, name, local[name])
		stillRunning(ctx, t, tb.Cluster(peerName(k)), ns, name, remote[name])
	}
	if _, err := tb.Cluster(last).Client().CoreV1().Pods(ns).Get(ctx, "on-"+last, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the pod on the unpeered %s: %v, want it gone", last, err)
	}

	liqoctlOK(ctx, t, "unoffload", "namespace", ns, "--kubeconfig", kubeconfigs["hub"])
	for k := 1; k < peers; k++ {
		liqoctlOK(ctx, t, append([]string{"unpeer"}, peerArgs("hub", peerName(k))...)...)
	}
}

// TestOneProviderFiveConsumers: five consumers peer with the hub at once,
// each offloads a namespace with a pod on it, and the last unpeers: the
// other consumers' pods go on, the same pods, unrestarted.
func TestOneProviderFiveConsumers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	hub := tb.Cluster("hub")
	var wg sync.WaitGroup
	for k := 1; k <= peers; k++ {
		wg.Go(func() {
			if out, err := liqoctl.Execute(ctx, append([]string{"peer", "--networking-disabled"}, peerArgs(peerName(k), "hub")...)...); err != nil {
				t.Errorf("%s peering with the hub: %v\n%s", peerName(k), err, out)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	const ns = "shop"
	local, remote := map[string]string{}, map[string]string{}
	for k := 1; k <= peers; k++ {
		c := tb.Cluster(peerName(k))
		if _, err := c.Client().CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		liqoctlOK(ctx, t, "offload", "namespace", ns, "--pod-offloading-strategy", "Remote", "--kubeconfig", kubeconfigs[c.Name])
		if _, err := c.Client().CoreV1().Pods(ns).Create(ctx, pinnedPod(ns, "hub"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for k := 1; k <= peers; k++ {
		local[peerName(k)] = waitRunning(ctx, t, tb.Cluster(peerName(k)), ns, "on-hub")
		// Each consumer's twin on the hub: the default mapping's name.
		remote[peerName(k)] = waitRunning(ctx, t, hub, ns+"-"+peerName(k), "on-hub")
	}

	last := peerName(peers)
	liqoctlOK(ctx, t, append([]string{"unpeer"}, peerArgs(last, "hub")...)...)
	time.Sleep(5 * time.Second)
	for k := 1; k < peers; k++ {
		stillRunning(ctx, t, tb.Cluster(peerName(k)), ns, "on-hub", local[peerName(k)])
		stillRunning(ctx, t, hub, ns+"-"+peerName(k), "on-hub", remote[peerName(k)])
	}
	if _, err := hub.Client().CoreV1().Pods(ns+"-"+last).Get(ctx, "on-hub", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the pod of the unpeered %s on the hub: %v, want it gone", last, err)
	}
	for k := 1; k < peers; k++ {
		liqoctlOK(ctx, t, "unoffload", "namespace", ns, "--kubeconfig", kubeconfigs[peerName(k)])
		liqoctlOK(ctx, t, append([]string{"unpeer"}, peerArgs(peerName(k), "hub")...)...)
	}
}
