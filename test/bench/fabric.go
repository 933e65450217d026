package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager"
	"github.com/liqo-go/liqo/pkg/ipam"
	"github.com/liqo-go/liqo/pkg/liqoctl"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/pkg/testbed/fabricopts"
)

// fabricResult holds the network fabric's figures: liqoctl network
// connect until both gateways report Connected, and an HTTP download of
// fabricMB from a pod of the other cluster (through the tunnel) beside the
// same download from a pod of the same cluster, and the time of small
// requests both ways.
type fabricResult struct {
	connect           []time.Duration
	sizeMB            int
	crossMbps, inMbps []float64
	crossReq, inReq   []time.Duration
}

// benchFabric runs two one-real-node clusters with the same pod CIDR and
// the fabric on.
func benchFabric(ctx context.Context, bins *testbed.Binaries, connects, sizeMB, requests int) (*fabricResult, error) {
	ctrl.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
	spec := func(name string) testbed.ClusterSpec {
		return testbed.ClusterSpec{Name: name, RealNodes: 1, Nodes: []testbed.NodePool{{Count: 0}}}
	}
	tb, err := testbed.Start(ctx, testbed.Options{Binaries: bins}, spec("rome"), spec("milan"))
	if err != nil {
		return nil, err
	}
	defer tb.Stop()
	mctx, stop := context.WithCancel(ctx)
	defer stop()
	kubeconfigs, cleanup, err := startManagers(mctx, tb, func(c *testbed.Cluster, o *controllermanager.Options) error {
		return fabricopts.Enable(ctx, c, o)
	})
	if cleanup != nil {
		defer cleanup()
	}
	if err != nil {
		return nil, err
	}
	rome, milan := tb.Cluster("rome"), tb.Cluster("milan")
	args := []string{"--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs["milan"]}
	r := &fabricResult{sizeMB: sizeMB}
	for i := range connects {
		start := time.Now()
		if out, err := liqoctl.Execute(ctx, append([]string{"network", "connect", "--server-service-type", "NodePort"}, args...)...); err != nil {
			return nil, fmt.Errorf("network connect: %w\n%s", err, out)
		}
		r.connect = append(r.connect, time.Since(start))
		fmt.Fprintf(os.Stderr, "bench: network connect → Connected in %s\n", time.Since(start).Round(time.Millisecond))
		if i < connects-1 {
			if out, err := liqoctl.Execute(ctx, append([]string{"network", "reset"}, args...)...); err != nil {
				return nil, fmt.Errorf("network reset: %w\n%s", err, out)
			}
		}
	}

	// A file server and a client in rome, a file server in milan.
	for _, c := range []*testbed.Cluster{rome, milan} {
		if err := runPod(ctx, c, "server", fmt.Sprintf("mkdir -p /www && hostname > /www/index.html && dd if=/dev/zero of=/www/big bs=1M count=%d 2>/dev/null && exec httpd -f -p 8080 -h /www", sizeMB)); err != nil {
			return nil, err
		}
	}
	if err := runPod(ctx, rome, "client", "exec sleep 3600"); err != nil {
		return nil, err
	}
	local, err := podIP(ctx, rome, "server")
	if err != nil {
		return nil, err
	}
	remoteReal, err := podIP(ctx, milan, "server")
	if err != nil {
		return nil, err
	}
	remote, err := remappedIP(ctx, rome, "milan", remoteReal)
	if err != nil {
		return nil, err
	}
	for range 3 {
		for _, x := range []struct {
			ip   string
			into *[]float64
		}{{remote, &r.crossMbps}, {local, &r.inMbps}} {
			d, err := execTime(ctx, rome, "client", "wget", "-q", "-O", "/dev/null", "http://"+x.ip+":8080/big")
			if err != nil {
				return nil, err
			}
			*x.into = append(*x.into, float64(sizeMB)*8/d.Seconds())
		}
	}
	for range requests {
		for _, x := range []struct {
			ip   string
			into *[]time.Duration
		}{{remote, &r.crossReq}, {local, &r.inReq}} {
			d, err := execTime(ctx, rome, "client", "wget", "-q", "-O", "/dev/null", "http://"+x.ip+":8080/")
			if err != nil {
				return nil, err
			}
			*x.into = append(*x.into, d)
		}
	}
	return r, nil
}

// runPod runs a busybox pod with script on the cluster's real node and
// waits until it runs.
func runPod(ctx context.Context, c *testbed.Cluster, name, script string) error {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: corev1.PodSpec{
		NodeSelector:                  map[string]string{testbed.NodeTypeLabel: testbed.RealNodeType},
		TerminationGracePeriodSeconds: ptr.To[int64](1),
		Containers:                    []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"sh", "-c", script}}},
	}}
	if _, err := c.Client().CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return err
	}
	_, err := podIP(ctx, c, name)
	return err
}

func podIP(ctx context.Context, c *testbed.Cluster, name string) (string, error) {
	var ip string
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := c.Client().CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ip = p.Status.PodIP
		return p.Status.Phase == corev1.PodRunning && ip != "", nil
	})
	return ip, err
}

// remappedIP is the address under which c reaches peer's pod ip.
func remappedIP(ctx context.Context, c *testbed.Cluster, peer, ip string) (string, error) {
	cl, err := client.New(c.Config, client.Options{Scheme: apis.NewScheme()})
	if err != nil {
		return "", err
	}
	var cfg netv1beta1.Configuration
	if err := cl.Get(ctx, client.ObjectKey{Namespace: consts.TenantNamespace(peer), Name: peer}, &cfg); err != nil {
		return "", err
	}
	if cfg.Status.Remote == nil || len(cfg.Status.Remote.CIDR.Pod) == 0 {
		return "", fmt.Errorf("the Configuration of %s is not remapped", peer)
	}
	m, err := ipam.NewMapping([]string{string(cfg.Spec.Remote.CIDR.Pod[0])}, []string{string(cfg.Status.Remote.CIDR.Pod[0])})
	if err != nil {
		return "", err
	}
	out, ok := m.Translate(ip)
	if !ok {
		return "", fmt.Errorf("%s is outside %s's pod CIDR", ip, peer)
	}
	return out, nil
}

// execTime runs cmd in pod with kubectl exec and times it (the exec's own
// cost, the same for both paths, is included).
func execTime(ctx context.Context, c *testbed.Cluster, pod string, cmd ...string) (time.Duration, error) {
	start := time.Now()
	out, err := exec.CommandContext(ctx, c.KubectlPath(), append([]string{"--kubeconfig", c.Kubeconfig, "exec", "-n", "default", pod, "--"}, cmd...)...).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("%s in %s: %w: %s", strings.Join(cmd, " "), pod, err, out)
	}
	return time.Since(start), nil
}

func printFabric(r *fabricResult) {
	w := tabwriter.NewWriter(tables, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tables, "\nNetwork fabric (two one-real-node clusters with the same pod CIDR, wireguard-go gateways, NodePort)")
	sort.Slice(r.connect, func(i, j int) bool { return r.connect[i] < r.connect[j] })
	sort.Float64s(r.crossMbps)
	sort.Float64s(r.inMbps)
	fmt.Fprintln(w, "measure\tthrough the fabric\twithin the cluster\t")
	fmt.Fprintf(w, "liqoctl network connect → both Connected (%d runs)\tmedian %s, max %s\t–\t\n", len(r.connect), ms(quantile(r.connect, 0.5)), ms(quantile(r.connect, 1)))
	fmt.Fprintf(w, "HTTP download of %d MB, pod to pod (median of %d, Mbit/s, kubectl exec included)\t%.0f\t%.0f\t\n", r.sizeMB, len(r.inMbps), r.crossMbps[len(r.crossMbps)/2], r.inMbps[len(r.inMbps)/2])
	fmt.Fprintf(w, "small HTTP request, pod to pod, kubectl exec included (%d)\t%s\t%s\t\n", len(r.inReq), percentiles(r.crossReq), percentiles(r.inReq))
	// Vanilla is within one cluster, offloaded through the fabric.
	record(measurement{Suite: "fabric", Measure: "liqoctl network connect → both Connected, median", N: len(r.connect), Unit: "s", Value: seconds(quantile(r.connect, 0.5))})
	record(measurement{Suite: "fabric", Measure: "HTTP download pod to pod, median", N: r.sizeMB, Unit: "Mbit/s",
		Vanilla: number(r.inMbps[len(r.inMbps)/2]), Offloaded: number(r.crossMbps[len(r.crossMbps)/2])})
	in, cross := slices.Clone(r.inReq), slices.Clone(r.crossReq)
	slices.Sort(in)
	slices.Sort(cross)
	for _, q := range []float64{0.5, 0.99} {
		record(measurement{Suite: "fabric", Measure: fmt.Sprintf("small HTTP request pod to pod, p%.0f", 100*q), Unit: "s",
			Vanilla: seconds(quantile(in, q)), Offloaded: seconds(quantile(cross, q))})
	}
	w.Flush()
}
