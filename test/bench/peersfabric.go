package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	gwctl "github.com/liqo-go/liqo/pkg/controllermanager/gateway"
	"github.com/liqo-go/liqo/pkg/liqoctl"
	"github.com/liqo-go/liqo/pkg/proc"
	"github.com/liqo-go/liqo/pkg/testbed"
)

// peersFabricResult holds the figures of one real-node cluster (the hub)
// consuming n real-node providers with the network fabric on: every
// cluster has the same pod CIDR, so each peering remaps.
type peersFabricResult struct {
	n int
	// peerings are the liqoctl peer durations, hub → provider k, in order:
	// the fabric connected and the virtual node Ready.
	peerings []time.Duration
	// manager and node are the hub's manager and its real node (node
	// processes and pods: the gateways run there) after 0..n peerings;
	// their idle CPU per second over idleWindow at each point.
	manager, node               []proc.Usage
	managerIdleCPU, nodeIdleCPU []time.Duration
	// gateways are the gateway pods on the hub's node with n providers.
	gateways int
	// disturbed and flaps are unpeerOne's figures for the providers left
	// after unpeering one; connectionFlaps counts the other peerings'
	// Connections leaving Connected meanwhile.
	disturbed, flaps, connectionFlaps int
}

// benchPeersFabric runs the fabric part of the peers suite: n+1 clusters
// with one real node each, their managers as processes of their own with
// the network fabric on.
func benchPeersFabric(ctx context.Context, bins *testbed.Binaries, n int) (*peersFabricResult, error) {
	ctrl.SetLogger(logr.Discard())
	dir, manager, cleanup, err := managerWorkDir(ctx, "peers-fabric")
	if err != nil {
		return nil, err
	}
	defer cleanup()
	specs := []testbed.ClusterSpec{{Name: "hub", RealNodes: 1, Nodes: []testbed.NodePool{{Count: 0}}}}
	for k := 1; k <= n; k++ {
		specs = append(specs, testbed.ClusterSpec{Name: peerName(k), RealNodes: 1, Nodes: []testbed.NodePool{{Count: 0}}})
	}
	fmt.Fprintf(os.Stderr, "bench: peers with the fabric: starting %d real-node clusters\n", len(specs))
	tb, err := testbed.Start(ctx, testbed.Options{Binaries: bins}, specs...)
	if err != nil {
		return nil, err
	}
	defer tb.Stop()
	kubeconfigs, pids, stopManagers, err := fabricManagers(ctx, tb, manager, dir)
	defer stopManagers()
	if err != nil {
		return nil, err
	}
	time.Sleep(settle)
	hub := tb.Cluster("hub")
	hubNode := hub.RealNodeNames()[0]
	hubClient, err := client.NewWithWatch(hub.Config, client.Options{Scheme: apis.NewScheme()})
	if err != nil {
		return nil, err
	}
	r := &peersFabricResult{n: n}
	usage := func() error {
		m, mIdle, nd, nIdle, err := idleUsageWithNode(hub, hubNode, pids["hub"])
		if err != nil {
			return err
		}
		r.manager, r.managerIdleCPU = append(r.manager, m), append(r.managerIdleCPU, mIdle)
		r.node, r.nodeIdleCPU = append(r.node, nd), append(r.nodeIdleCPU, nIdle)
		return nil
	}
	if err := usage(); err != nil {
		return nil, err
	}
	for k := 1; k <= n; k++ {
		began := time.Now()
		out, err := liqoctl.Execute(ctx, "peer", "--verbose", "--kubeconfig", kubeconfigs["hub"], "--remote-kubeconfig", kubeconfigs[peerName(k)],
			"--server-service-type", "NodePort", "--timeout", "5m")
		if err != nil {
			return nil, fmt.Errorf("peer hub → %s: %w\n%s", peerName(k), err, out)
		}
		d := time.Since(began)
		// Its steps and their times, to tell where a slow peering waited.
		fmt.Fprintf(os.Stderr, "bench: peers with the fabric: liqoctl peer hub → %s:\n%s", peerName(k), out)
		r.peerings = append(r.peerings, d)
		time.Sleep(settleAfterPeer)
		if err := usage(); err != nil {
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "bench: peers with the fabric: hub → %s in %s; the hub's manager RSS %s, its node (gateways included) %s\n",
			peerName(k), ms(d), mb(r.manager[k].RSS), mb(r.node[k].RSS))
	}
	gws, err := hub.Client().CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: gwctl.ComponentLabel + "=" + gwctl.ComponentValue})
	if err != nil {
		return nil, err
	}
	r.gateways = len(gws.Items)

	// One pod on each provider's real node, through its virtual node; then
	// the last provider unpeered while the others' pods and tunnels are
	// watched.
	const ns = "bench-peers-fabric"
	if _, err := offloadNamespace(ctx, hubClient, kubeconfigs["hub"], ns, "Remote"); err != nil {
		return nil, err
	}
	for k := 1; k <= n; k++ {
		if err := createPinnedPod(ctx, hub.Client(), ns, peerName(k), peerName(k)); err != nil {
			return nil, err
		}
	}
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := hub.Client().CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running == n, nil
	}); err != nil {
		return nil, fmt.Errorf("a pod Running on each of the %d providers: %w", n, err)
	}
	gone := peerName(n)
	wctx, stopWatch := context.WithCancel(ctx)
	flaps, err := watchConnectionFlaps(wctx, hubClient, gone)
	if err != nil {
		stopWatch()
		return nil, err
	}
	r.disturbed, r.flaps, err = unpeerOne(ctx, hub.Client(), ns, gone, func() error {
		out, err := liqoctl.Execute(ctx, "unpeer", "--kubeconfig", kubeconfigs["hub"], "--remote-kubeconfig", kubeconfigs[gone])
		if err != nil {
			return fmt.Errorf("unpeer hub → %s: %w\n%s", gone, err, out)
		}
		return nil
	})
	stopWatch()
	r.connectionFlaps = flaps()
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "bench: peers with the fabric: unpeering %s: %d Connection flaps of the other peerings\n", gone, r.connectionFlaps)
	return r, nil
}

// idleUsageWithNode reads the usage of a manager process and of a real
// node (its processes and pods), then their CPU per second over
// idleWindow.
func idleUsageWithNode(c *testbed.Cluster, node string, pid int) (manager proc.Usage, managerIdle time.Duration, nodeUsage proc.Usage, nodeIdle time.Duration, err error) {
	nodeBefore, err := c.RealNodeUsage(node, true)
	if err != nil {
		return manager, 0, nodeUsage, 0, err
	}
	if manager, managerIdle, err = idleUsage(pid); err != nil {
		return manager, 0, nodeUsage, 0, err
	}
	if nodeUsage, err = c.RealNodeUsage(node, true); err != nil {
		return manager, 0, nodeUsage, 0, err
	}
	return manager, managerIdle, nodeUsage, (nodeUsage.CPU - nodeBefore.CPU) / (idleWindow / time.Second), nil
}

// createPinnedPod creates a busybox pod that sleeps, bound by its node
// selector to the virtual node named node.
func createPinnedPod(ctx context.Context, cs kubernetes.Interface, ns, name, node string) error {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{
		NodeSelector:                  map[string]string{corev1.LabelHostname: node},
		TerminationGracePeriodSeconds: ptr.To[int64](1),
		Containers:                    []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"sleep", "100000"}}},
	}}
	_, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	return err
}

// watchConnectionFlaps counts, until ctx ends, the times a Connection of a
// peering other than gone's reports anything but Connected; the returned
// function waits for the watch to end and gives the count.
func watchConnectionFlaps(ctx context.Context, cl client.WithWatch, gone string) (func() int, error) {
	w, err := cl.Watch(ctx, &netv1beta1.ConnectionList{})
	if err != nil {
		return nil, err
	}
	var (
		mu    sync.Mutex
		flaps int
		done  = make(chan struct{})
	)
	go func() {
		defer close(done)
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.ResultChan():
				if !ok {
					return
				}
				c, isConn := ev.Object.(*netv1beta1.Connection)
				if !isConn || c.Labels[consts.RemoteClusterIDLabel] == gone {
					continue
				}
				if ev.Type == watch.Deleted || (ev.Type == watch.Modified && c.Status.Value != netv1beta1.Connected) {
					mu.Lock()
					flaps++
					mu.Unlock()
				}
			}
		}
	}()
	return func() int {
		<-done
		mu.Lock()
		defer mu.Unlock()
		return flaps
	}, nil
}

func printPeersFabric(r *peersFabricResult) {
	mbs := func(us []proc.Usage) []float64 {
		out := make([]float64, len(us))
		for i, u := range us {
			out[i] = float64(u.RSS) / 1e6
		}
		return out
	}
	msps := func(ds []time.Duration) []float64 {
		out := make([]float64, len(ds))
		for i, d := range ds {
			out[i] = float64(d) / float64(time.Millisecond)
		}
		return out
	}
	manager, node := mbs(r.manager), mbs(r.node)
	nodePSS := make([]float64, len(r.node))
	for i, u := range r.node {
		nodePSS[i] = float64(u.PSS) / 1e6
	}
	managerCPU, nodeCPU := msps(r.managerIdleCPU), msps(r.nodeIdleCPU)
	t := newValueTable("peers-fabric", r.n, fmt.Sprintf("Peers with the network fabric: one real-node cluster consuming %d others, the same pod CIDR everywhere", r.n))
	row := t.row
	p50, p99 := percentile(r.peerings, 50), percentile(r.peerings, 99)
	last := r.peerings[len(r.peerings)-1]
	row("liqoctl peer → fabric connected and virtual node Ready, p50", ms(p50), measurement{Unit: "s", Value: seconds(p50)})
	row("liqoctl peer → fabric connected and virtual node Ready, p99", ms(p99), measurement{Unit: "s", Value: seconds(p99)})
	row(fmt.Sprintf("peering provider number %d", r.n), ms(last), measurement{Unit: "s", Value: seconds(last)})
	row(fmt.Sprintf("gateway pods on the consumer's node, %d providers", r.n), fmt.Sprint(r.gateways), measurement{Unit: "pods", Value: number(float64(r.gateways))})
	row(fmt.Sprintf("consumer manager RSS, no peer → %d providers", r.n), fmt.Sprintf("%.1f → %.1f MB", manager[0], manager[len(manager)-1]),
		measurement{Unit: "MB", Value: number(manager[len(manager)-1])})
	row("consumer manager RSS per extra provider (slope)", fmt.Sprintf("%.2f MB", slope(manager[1:])), measurement{Unit: "MB", Value: number(slope(manager[1:]))})
	row("consumer node RSS (its processes and pods) per provider (slope)", fmt.Sprintf("%.2f MB", slope(node)), measurement{Unit: "MB", Value: number(slope(node))})
	row("consumer node PSS (shared pages counted once) per provider (slope)", fmt.Sprintf("%.2f MB", slope(nodePSS)), measurement{Unit: "MB", Value: number(slope(nodePSS))})
	row("consumer manager idle CPU per extra provider (slope)", fmt.Sprintf("%.2f ms/s", slope(managerCPU[1:])), measurement{Unit: "ms/s", Value: number(slope(managerCPU[1:]))})
	row("consumer node idle CPU per provider (slope)", fmt.Sprintf("%.2f ms/s", slope(nodeCPU)), measurement{Unit: "ms/s", Value: number(slope(nodeCPU))})
	row("unpeering one: other pods re-created or restarted", fmt.Sprint(r.disturbed), measurement{Unit: "pods", Value: number(float64(r.disturbed))})
	row("unpeering one: Ready flaps of the other virtual nodes", fmt.Sprint(r.flaps), measurement{Unit: "flaps", Value: number(float64(r.flaps))})
	row("unpeering one: the other Connections leaving Connected", fmt.Sprint(r.connectionFlaps), measurement{Unit: "flaps", Value: number(float64(r.connectionFlaps))})
	t.flush()
}
