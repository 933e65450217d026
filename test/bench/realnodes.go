package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/liqo-go/liqo/pkg/proc"
	"github.com/liqo-go/liqo/pkg/testbed"
)

// realNodeResult holds the real-node figures: how long a real node takes to
// get Ready, how long a pod takes from create to Running on it (one at a
// time, image already pulled), and what the node's own processes use.
type realNodeResult struct {
	ready    []time.Duration
	podStart []time.Duration
	idle     proc.Usage
	loaded   proc.Usage
	loadPods int
}

// benchRealNodes starts a one-real-node cluster `starts` times, and in the
// last one creates `pods` pods one after the other, then keeps them all
// running to read the node's memory under load.
func benchRealNodes(ctx context.Context, bins *testbed.Binaries, starts, pods int) (realNodeResult, error) {
	var r realNodeResult
	spec := testbed.ClusterSpec{Name: "bench", RealNodes: 1, Nodes: []testbed.NodePool{{Count: 0}}}
	var tb *testbed.Testbed
	for i := range starts {
		var err error
		if tb, err = testbed.Start(ctx, testbed.Options{Binaries: bins}, spec); err != nil {
			return r, err
		}
		c := tb.Clusters[0]
		r.ready = append(r.ready, c.RealNodesReadyAfter)
		fmt.Fprintf(os.Stderr, "bench: real node Ready %s after its processes started\n", c.RealNodesReadyAfter.Round(time.Millisecond))
		if i < starts-1 {
			tb.Stop()
		}
	}
	defer tb.Stop()
	c := tb.Clusters[0]
	node := c.RealNodeNames()[0]
	var err error
	if r.idle, err = c.RealNodeUsage(node, false); err != nil {
		return r, err
	}
	cs := c.Client()
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "bench-real-"}}, metav1.CreateOptions{})
	if err != nil {
		return r, err
	}
	for i := range pods {
		d, err := timePodStart(ctx, c, ns.Name, fmt.Sprintf("p%d", i))
		if err != nil {
			return r, err
		}
		r.podStart = append(r.podStart, d)
	}
	r.loadPods = pods
	if r.loaded, err = c.RealNodeUsage(node, false); err != nil {
		return r, err
	}
	return r, nil
}

// timePodStart creates a busybox pod on the real node and times, with a
// watch, its creation to Running.
func timePodStart(ctx context.Context, c *testbed.Cluster, ns, name string) (time.Duration, error) {
	cs := c.Client()
	w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	if err != nil {
		return 0, err
	}
	defer w.Stop()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{
			NodeSelector:                  map[string]string{testbed.NodeTypeLabel: testbed.RealNodeType},
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers:                    []corev1.Container{{Name: "main", Image: "busybox", Command: []string{"sleep", "3600"}}},
		},
	}
	start := time.Now()
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return 0, err
	}
	timeout := time.After(2 * time.Minute)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return 0, fmt.Errorf("the watch of pod %s ended", name)
			}
			if p, isPod := ev.Object.(*corev1.Pod); isPod && ev.Type != watch.Deleted && p.Status.Phase == corev1.PodRunning {
				return time.Since(start), nil
			}
		case <-timeout:
			return 0, fmt.Errorf("pod %s not Running after 2 minutes", name)
		}
	}
}

func printRealNodes(r realNodeResult) {
	w := tabwriter.NewWriter(tables, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tables, "\nReal nodes (containerd + kubelet + kube-proxy in a network namespace, images from the testbed registry)")
	sort.Slice(r.ready, func(i, j int) bool { return r.ready[i] < r.ready[j] })
	sort.Slice(r.podStart, func(i, j int) bool { return r.podStart[i] < r.podStart[j] })
	fmt.Fprintln(w, "measure\tvalue\t")
	fmt.Fprintf(w, "node processes started → node Ready (%d starts)\tmedian %s, max %s\t\n", len(r.ready), ms(quantile(r.ready, 0.5)), ms(quantile(r.ready, 1)))
	fmt.Fprintf(w, "pod create → Running, one at a time (%d pods)\t%s\t\n", len(r.podStart), percentiles(r.podStart))
	fmt.Fprintf(w, "node RSS (containerd, kubelet, kube-proxy, shims), idle\t%s\t\n", mb(r.idle.RSS))
	fmt.Fprintf(w, "node RSS with %d pods running\t%s\t\n", r.loadPods, mb(r.loaded.RSS))
	for _, f := range []measurement{
		{Measure: "node processes started → node Ready, median", Unit: "s", Value: seconds(quantile(r.ready, 0.5))},
		{Measure: "pod create → Running, one at a time, p50", Unit: "s", Value: seconds(quantile(r.podStart, 0.5))},
		{Measure: "pod create → Running, one at a time, p99", Unit: "s", Value: seconds(quantile(r.podStart, 0.99))},
		{Measure: "node RSS, idle", Unit: "MB", Value: megabytes(r.idle.RSS)},
		{Measure: "node RSS with pods running", N: r.loadPods, Unit: "MB", Value: megabytes(r.loaded.RSS)},
	} {
		f.Suite = "realnodes"
		record(f)
	}
	w.Flush()
}

func mb(b int64) string { return fmt.Sprintf("%.0f MB", float64(b)/1e6) }
