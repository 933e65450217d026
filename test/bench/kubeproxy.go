package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/liqo-go/liqo/pkg/proc"
	"github.com/liqo-go/liqo/pkg/testbed"
)

// proxyModeResult compares kube-proxy's modes on one real node holding
// `services` Services with one endpoint each.
type proxyModeResult struct {
	mode      string
	services  int
	programed time.Duration // last Service created → kube-proxy idle again
	syncMean  time.Duration // mean rule sync duration (kube-proxy's histogram)
	syncs     int
	cpu       time.Duration // kube-proxy CPU while the Services came in
	rss       int64
}

func benchProxyModes(ctx context.Context, bins *testbed.Binaries, services int) ([]proxyModeResult, error) {
	var out []proxyModeResult
	for _, mode := range []string{"iptables", "nftables"} {
		r, err := benchProxyMode(ctx, bins, mode, services)
		if err != nil {
			return nil, fmt.Errorf("kube-proxy %s: %w", mode, err)
		}
		fmt.Fprintf(os.Stderr, "bench: kube-proxy %s: %d Services programmed %s after the last, mean sync %s, CPU %s\n",
			mode, services, ms(r.programed), ms(r.syncMean), ms(r.cpu))
		out = append(out, r)
	}
	return out, nil
}

func benchProxyMode(ctx context.Context, bins *testbed.Binaries, mode string, services int) (proxyModeResult, error) {
	r := proxyModeResult{mode: mode, services: services}
	tb, err := testbed.Start(ctx, testbed.Options{Binaries: bins},
		testbed.ClusterSpec{Name: "proxy", RealNodes: 1, Nodes: []testbed.NodePool{{Count: 0}}, ProxyMode: mode})
	if err != nil {
		return r, err
	}
	defer tb.Stop()
	c := tb.Clusters[0]
	node := c.RealNodeNames()[0]
	pid := c.PIDs()[node+"-"+testbed.KubeProxy]
	cs := c.Client()
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "proxy-"}}, metav1.CreateOptions{})
	if err != nil {
		return r, err
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns.Name, Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{testbed.NodeTypeLabel: testbed.RealNodeType},
			Containers:   []corev1.Container{{Name: "web", Image: "busybox", Command: []string{"sh", "-c", "mkdir -p /w && exec httpd -f -p 8080 -h /w"}}},
		},
	}
	if _, err := cs.CoreV1().Pods(ns.Name).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return r, err
	}
	before, err := proc.UsageOf(pid)
	if err != nil {
		return r, err
	}
	for i := range services {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("s%d", i), Namespace: ns.Name},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"},
				Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
		}
		if _, err := cs.CoreV1().Services(ns.Name).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			return r, err
		}
	}
	last := time.Now()
	// Programmed: every Service's change applied (no change pending) after
	// the endpoints came in, as kube-proxy's own metrics tell.
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 3*time.Minute, true, func(context.Context) (bool, error) {
		m, err := proxyMetrics(ctx, c, node)
		if err != nil {
			return false, err
		}
		if m["kubeproxy_sync_proxy_rules_service_changes_pending"] == 0 && m["kubeproxy_sync_proxy_rules_endpoint_changes_pending"] == 0 &&
			m["kubeproxy_sync_proxy_rules_service_changes_total"] >= float64(services) {
			r.programed = time.Since(last)
			r.syncs = int(m["kubeproxy_sync_proxy_rules_duration_seconds_count"])
			if r.syncs > 0 {
				r.syncMean = time.Duration(m["kubeproxy_sync_proxy_rules_duration_seconds_sum"] / float64(r.syncs) * float64(time.Second))
			}
			return true, nil
		}
		return false, nil
	})
	if err != nil && ctx.Err() == nil && wait.Interrupted(err) {
		return r, fmt.Errorf("kube-proxy still has changes pending after 3 minutes")
	}
	if err != nil {
		return r, err
	}
	after, err := proc.UsageOf(pid)
	if err != nil {
		return r, err
	}
	r.cpu, r.rss = after.CPU-before.CPU, after.RSS
	return r, nil
}

// proxyMetrics reads kube-proxy's unlabelled metrics, from inside its node.
func proxyMetrics(ctx context.Context, c *testbed.Cluster, node string) (map[string]float64, error) {
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return c.DialInNode(ctx, node, network, addr)
	}}, Timeout: 5 * time.Second}
	resp, err := client.Get("http://127.0.0.1:10249/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	m := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		if i := strings.IndexByte(name, '{'); i >= 0 {
			name = name[:i] // sum the labelled series
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err == nil {
			m[name] += v
		}
	}
	return m, sc.Err()
}

func printProxyModes(rs []proxyModeResult) {
	w := tabwriter.NewWriter(tables, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tables, "\nkube-proxy modes (one real node, Services with one endpoint each)")
	fmt.Fprintln(w, "mode\tServices\tlast created → programmed\tsyncs\tmean sync\tkube-proxy CPU\tkube-proxy RSS\t")
	for _, r := range rs {
		fmt.Fprintf(w, "%s\t%d\t%s\t%d\t%s\t%s\t%s\t\n", r.mode, r.services, ms(r.programed), r.syncs, ms(r.syncMean), ms(r.cpu), mb(r.rss))
		for _, f := range []measurement{
			{Measure: "last created → programmed", Unit: "s", Value: seconds(r.programed)},
			{Measure: "mean sync", Unit: "s", Value: seconds(r.syncMean)},
			{Measure: "kube-proxy CPU", Unit: "s", Value: seconds(r.cpu)},
			{Measure: "kube-proxy RSS", Unit: "MB", Value: megabytes(r.rss)},
		} {
			f.Suite, f.Measure, f.N = "kube-proxy", r.mode+": "+f.Measure, r.services
			record(f)
		}
	}
	w.Flush()
}
