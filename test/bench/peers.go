package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	"github.com/liqo-go/liqo/deploy/charts/liqo/crds"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/proc"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
)

// peersResult holds the figures of one cluster ("hub") peered with n
// others: first as the consumer of all of them, then as the provider of
// all of them.
type peersResult struct {
	n int
	// peerings are the liqoctl peer durations, hub → provider k, in order.
	peerings []time.Duration
	// consumer are the hub manager's usage with 0..n providers, each
	// taken after the components idled; consumerIdleCPU its CPU per second
	// over the idle window at each point.
	consumer        []proc.Usage
	consumerIdleCPU []time.Duration
	// vanilla and offloaded: 10·n pods Running, on the hub's own nodes and
	// spread over the n virtual nodes.
	vanilla, offloaded time.Duration
	// fanout is, for each provider, the time from one ConfigMap update in
	// the offloaded namespace to its twin copy showing it.
	fanout []time.Duration
	// disturbed counts, after one provider was unpeered, the other
	// providers' pods that were re-created or restarted, and the Ready
	// flaps of their virtual nodes.
	disturbed, flaps int
	// allAtOnce is the time for n consumers peering with the hub at once to
	// all have a Ready virtual node; provider the hub manager's usage
	// before and after; providerIdleCPU its idle CPU per second then.
	allAtOnce       time.Duration
	provider        [2]proc.Usage
	providerIdleCPU [2]time.Duration
	// consumerWatches and consumerRate are the watches a consumer holds on
	// one provider's API server, and the requests per second it sends there
	// when idle (p01's API server before and after the peering);
	// providerWatches and providerRate the same on the hub's API server,
	// per consumer.
	consumerWatches, consumerRate, providerWatches, providerRate float64
	// ownWatches and ownRate are what each provider adds to the consumer's
	// own API server when idle (the virtual node's lease and status, the
	// manager's watches of it): watches, and requests per second.
	ownWatches, ownRate float64
	// offloadedWatches are the consumer's watches on one provider with a
	// namespace offloaded there (p01's API server, against before the
	// peering).
	offloadedWatches float64
}

// idleWindow is how long a manager's CPU is read for its idle figure, after
// settleAfterPeer.
const (
	idleWindow      = 5 * time.Second
	apiWindow       = 20 * time.Second
	settleAfterPeer = 3 * time.Second
)

// benchPeers runs the peers suite: n+1 testbed clusters of simulated nodes,
// each with its controller manager as a process of its own, networking
// disabled.
func benchPeers(ctx context.Context, bins *testbed.Binaries, n int) (*peersResult, error) {
	dir, manager, cleanup, err := managerWorkDir(ctx, "peers")
	if err != nil {
		return nil, err
	}
	defer cleanup()
	// The hub's nodes take vanilla's 10·n pods and, shared at half, the
	// default slice (4 CPUs, 8Gi, 110 pods, 20Gi) of each of n consumers;
	// each provider needs only its share.
	specs := []testbed.ClusterSpec{{Name: "hub", Nodes: []testbed.NodePool{{Prefix: "worker", Count: n/2 + 1, CPU: "16", Memory: "64Gi", EphemeralStorage: "200Gi", Pods: 500}}}}
	for k := 1; k <= n; k++ {
		specs = append(specs, testbed.ClusterSpec{Name: peerName(k), Nodes: []testbed.NodePool{{Prefix: "worker", Count: 1, CPU: "8", Memory: "32Gi", EphemeralStorage: "100Gi", Pods: 110}}})
	}
	fmt.Fprintf(os.Stderr, "bench: peers: starting %d clusters\n", len(specs))
	tb, err := testbed.Start(ctx, testbed.Options{Binaries: bins}, specs...)
	if err != nil {
		return nil, err
	}
	defer tb.Stop()
	kubeconfigs, pids, stops := map[string]string{}, map[string]int{}, map[string]func(){}
	defer func() {
		for _, stop := range stops {
			stop()
		}
	}()
	start := func(c *testbed.Cluster) error {
		addr, err := freeAddr()
		if err != nil {
			return err
		}
		pid, stop, err := startManager(ctx, manager, kubeconfigs[c.Name], c.Name, filepath.Join(dir, fmt.Sprintf("%s-manager-%d.log", c.Name, len(stops))), addr)
		if err != nil {
			return err
		}
		pids[c.Name], stops[c.Name] = pid, stop
		return nil
	}
	for _, c := range tb.Clusters {
		kubeconfigs[c.Name] = filepath.Join(dir, c.Name+".kubeconfig")
		if err := c.WriteKubeconfig(kubeconfigs[c.Name]); err != nil {
			return nil, err
		}
		if err := crds.Install(ctx, c.Config); err != nil {
			return nil, err
		}
		if err := start(c); err != nil {
			return nil, err
		}
	}
	for _, c := range tb.Clusters {
		if err := factory.WaitForComponents(ctx, kubeconfigs[c.Name], consts.DefaultNamespace, 2*time.Minute); err != nil {
			return nil, err
		}
	}
	time.Sleep(settle)
	hub := tb.Cluster("hub")
	hubClient, err := client.New(hub.Config, client.Options{Scheme: apis.NewScheme()})
	if err != nil {
		return nil, err
	}
	peer := func(consumer, provider string) (time.Duration, error) {
		cmd := liqoctl.NewRootCommand()
		cmd.SetOut(quiet{})
		cmd.SetArgs([]string{"peer", "--networking-disabled", "--kubeconfig", kubeconfigs[consumer], "--remote-kubeconfig", kubeconfigs[provider]})
		start := time.Now()
		if err := cmd.ExecuteContext(ctx); err != nil {
			return 0, fmt.Errorf("peer %s → %s: %w", consumer, provider, err)
		}
		return time.Since(start), nil
	}
	unpeer := func(consumer, provider string) error {
		cmd := liqoctl.NewRootCommand()
		cmd.SetOut(quiet{})
		cmd.SetArgs([]string{"unpeer", "--kubeconfig", kubeconfigs[consumer], "--remote-kubeconfig", kubeconfigs[provider]})
		if err := cmd.ExecuteContext(ctx); err != nil {
			return fmt.Errorf("unpeer %s → %s: %w", consumer, provider, err)
		}
		return nil
	}

	r := &peersResult{n: n}
	// The hub as a consumer of 1..n providers, one at a time.
	u, idle, err := idleUsage(pids["hub"])
	if err != nil {
		return nil, err
	}
	r.consumer, r.consumerIdleCPU = append(r.consumer, u), append(r.consumerIdleCPU, idle)
	first := tb.Cluster(peerName(1)).Client()
	w0, rate0, err := apiLoad(ctx, first)
	if err != nil {
		return nil, err
	}
	hubW0, hubRate0, err := apiLoad(ctx, hub.Client())
	if err != nil {
		return nil, err
	}
	for k := 1; k <= n; k++ {
		d, err := peer("hub", peerName(k))
		if err != nil {
			return nil, err
		}
		if k == 1 {
			time.Sleep(settleAfterPeer)
			w1, rate1, err := apiLoad(ctx, first)
			if err != nil {
				return nil, err
			}
			r.consumerWatches, r.consumerRate = w1-w0, rate1-rate0
		}
		r.peerings = append(r.peerings, d)
		time.Sleep(settleAfterPeer)
		u, idle, err := idleUsage(pids["hub"])
		if err != nil {
			return nil, err
		}
		r.consumer, r.consumerIdleCPU = append(r.consumer, u), append(r.consumerIdleCPU, idle)
		fmt.Fprintf(os.Stderr, "bench: peers: hub → %s in %s; the hub's manager: RSS %s, idle CPU %s/s\n", peerName(k), ms(d), mb(u.RSS), idle)
	}
	hubW1, hubRate1, err := apiLoad(ctx, hub.Client())
	if err != nil {
		return nil, err
	}
	r.ownWatches, r.ownRate = (hubW1-hubW0)/float64(n), (hubRate1-hubRate0)/float64(n)

	// 10·n pods on the hub's own nodes, then over the n virtual nodes.
	pods := 10 * n
	if v, err := deployAndWait(ctx, hub.Client(), pods); err != nil {
		return nil, fmt.Errorf("vanilla: %w", err)
	} else {
		r.vanilla = v.running
	}
	const ns = "bench-peers"
	if _, err := offloadNamespace(ctx, hubClient, kubeconfigs["hub"], ns, "Remote"); err != nil {
		return nil, err
	}
	if err := waitTwins(ctx, tb, n, ns); err != nil {
		return nil, err
	}
	time.Sleep(settleAfterPeer)
	w2, _, err := apiLoad(ctx, first)
	if err != nil {
		return nil, err
	}
	r.offloadedWatches = w2 - w0
	tracker, stopTracking, err := trackPods(hub.Client(), ns)
	if err != nil {
		return nil, err
	}
	defer stopTracking()
	began := time.Now()
	if err := createDeployment(ctx, hub.Client(), ns, pods); err != nil {
		return nil, err
	}
	if err := tracker.wait(ctx, 30*time.Minute, func(running, _ int) bool { return running >= pods }); err != nil {
		return nil, fmt.Errorf("offloaded: waiting for %d Running pods: %w", pods, err)
	}
	r.offloaded = time.Since(began)
	fmt.Fprintf(os.Stderr, "bench: peers: %d pods Running in %s on the hub's nodes, %s over %d virtual nodes\n", pods, ms(r.vanilla), ms(r.offloaded), n)

	// One ConfigMap change, reflected to every provider.
	if r.fanout, err = fanout(ctx, tb, hub.Client(), n, ns); err != nil {
		return nil, err
	}

	// Unpeering the last provider leaves the others' pods alone.
	if r.disturbed, r.flaps, err = unpeerOne(ctx, hub.Client(), ns, peerName(n), func() error { return unpeer("hub", peerName(n)) }); err != nil {
		return nil, err
	}
	if err := hub.Client().CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil {
		return nil, err
	}
	for k := 1; k < n; k++ {
		if err := unpeer("hub", peerName(k)); err != nil {
			return nil, err
		}
	}

	// The hub as the provider of n consumers peering at once, its manager
	// started again: the heap of its consumer days is not given back.
	stops["hub"]()
	if err := start(hub); err != nil {
		return nil, err
	}
	if err := factory.WaitForComponents(ctx, kubeconfigs["hub"], consts.DefaultNamespace, 2*time.Minute); err != nil {
		return nil, err
	}
	time.Sleep(settle)
	if r.provider[0], r.providerIdleCPU[0], err = idleUsage(pids["hub"]); err != nil {
		return nil, err
	}
	w0, rate0, err = apiLoad(ctx, hub.Client())
	if err != nil {
		return nil, err
	}
	began = time.Now()
	errs := make([]error, n)
	var wg sync.WaitGroup
	for k := 1; k <= n; k++ {
		wg.Go(func() { _, errs[k-1] = peer(peerName(k), "hub") })
	}
	wg.Wait()
	r.allAtOnce = time.Since(began)
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	time.Sleep(settleAfterPeer)
	if r.provider[1], r.providerIdleCPU[1], err = idleUsage(pids["hub"]); err != nil {
		return nil, err
	}
	w1, rate1, err := apiLoad(ctx, hub.Client())
	if err != nil {
		return nil, err
	}
	r.providerWatches, r.providerRate = (w1-w0)/float64(n), (rate1-rate0)/float64(n)
	fmt.Fprintf(os.Stderr, "bench: peers: %d consumers peered with the hub at once in %s; the hub's manager: RSS %s → %s\n",
		n, ms(r.allAtOnce), mb(r.provider[0].RSS), mb(r.provider[1].RSS))
	return r, nil
}

func peerName(k int) string { return fmt.Sprintf("p%02d", k) }

// quiet discards liqoctl's output.
type quiet struct{}

func (quiet) Write(p []byte) (int, error) { return len(p), nil }

// idleUsage reads a process's usage, then its CPU over idleWindow: the
// CPU it spends per second when nothing happens.
func idleUsage(pid int) (proc.Usage, time.Duration, error) {
	before, err := proc.UsageOf(pid)
	if err != nil {
		return proc.Usage{}, 0, err
	}
	time.Sleep(idleWindow)
	after, err := proc.UsageOf(pid)
	if err != nil {
		return proc.Usage{}, 0, err
	}
	return after, (after.CPU - before.CPU) / (idleWindow / time.Second), nil
}

// apiLoad reads an API server's open watches, and the requests per second
// it serves over apiWindow (whoever sends them: the difference of two
// readings, before and after a peering, is the peer's share, within the
// noise of the cluster's own traffic).
func apiLoad(ctx context.Context, cs kubernetes.Interface) (watches, rate float64, err error) {
	count := func() (float64, float64, error) {
		families, err := harness.APIServerMetrics(ctx, cs)
		if err != nil {
			return 0, 0, err
		}
		var w, total float64
		for _, m := range families["apiserver_longrunning_requests"].GetMetric() {
			if harness.Labels(m)["verb"] == "WATCH" {
				w += m.GetGauge().GetValue()
			}
		}
		for _, m := range families["apiserver_request_total"].GetMetric() {
			total += m.GetCounter().GetValue()
		}
		return w, total, nil
	}
	_, before, err := count()
	if err != nil {
		return 0, 0, err
	}
	time.Sleep(apiWindow)
	watches, after, err := count()
	// The metrics read itself is one request.
	return watches, (after - before - 1) / apiWindow.Seconds(), err
}

// waitTwins waits until the twin namespace of ns exists on providers
// 1..n.
func waitTwins(ctx context.Context, tb *testbed.Testbed, n int, ns string) error {
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		for k := 1; k <= n; k++ {
			if _, err := tb.Cluster(peerName(k)).Client().CoreV1().Namespaces().Get(ctx, twinOf(ns), metav1.GetOptions{}); err != nil {
				return false, nil
			}
		}
		return true, nil
	})
}

// twinOf is the twin namespace of ns on the providers: the default
// mapping's name, as offloadNamespace asks for it.
func twinOf(ns string) string { return ns + "-hub" }

// fanout creates a ConfigMap in ns, waits for its copy on every provider,
// then updates it and times, for each provider, when its copy shows the
// update.
func fanout(ctx context.Context, tb *testbed.Testbed, hub kubernetes.Interface, n int, ns string) ([]time.Duration, error) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "fanout"}, Data: map[string]string{"v": "0"}}
	if _, err := hub.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	copies := func(v string) func(context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) {
			for k := 1; k <= n; k++ {
				c, err := tb.Cluster(peerName(k)).Client().CoreV1().ConfigMaps(twinOf(ns)).Get(ctx, "fanout", metav1.GetOptions{})
				if err != nil || c.Data["v"] != v {
					return false, nil
				}
			}
			return true, nil
		}
	}
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, copies("0")); err != nil {
		return nil, fmt.Errorf("the ConfigMap's copies: %w", err)
	}
	// A watch on each provider's copy, opened before the update.
	seen := make([]time.Duration, n)
	var wg sync.WaitGroup
	start := make(chan time.Time, n)
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for k := 1; k <= n; k++ {
		w, err := tb.Cluster(peerName(k)).Client().CoreV1().ConfigMaps(twinOf(ns)).Watch(wctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", "fanout").String()})
		if err != nil {
			return nil, err
		}
		wg.Go(func() {
			defer w.Stop()
			t0 := <-start
			for ev := range w.ResultChan() {
				if c, ok := ev.Object.(*corev1.ConfigMap); ok && c.Data["v"] == "1" {
					seen[k-1] = time.Since(t0)
					return
				}
			}
		})
	}
	cm.Data["v"] = "1"
	t0 := time.Now()
	for range n {
		start <- t0
	}
	if _, err := hub.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		return nil, err
	}
	wg.Wait()
	for k, d := range seen {
		if d == 0 {
			return nil, fmt.Errorf("the update did not reach %s within a minute", peerName(k+1))
		}
	}
	return seen, nil
}

// unpeerOne runs unpeer (of the provider named gone) and reports, of the
// pods of ns on the other virtual nodes, how many were re-created or
// restarted, and how many times another virtual node left Ready meanwhile
// and in the 10 s after.
func unpeerOne(ctx context.Context, hub kubernetes.Interface, ns, gone string, unpeer func() error) (disturbed, flaps int, err error) {
	type state struct {
		uid      string
		restarts int32
	}
	snapshot := func() (map[string]state, error) {
		pods, err := hub.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		out := map[string]state{}
		for _, p := range pods.Items {
			if p.Spec.NodeName == gone || p.Status.Phase != corev1.PodRunning {
				continue
			}
			s := state{uid: string(p.UID)}
			for _, c := range p.Status.ContainerStatuses {
				s.restarts += c.RestartCount
			}
			out[p.Name] = s
		}
		return out, nil
	}
	before, err := snapshot()
	if err != nil {
		return 0, 0, err
	}
	w, err := hub.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{LabelSelector: consts.TypeLabel + "=" + consts.TypeVirtualNode})
	if err != nil {
		return 0, 0, err
	}
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			node, ok := ev.Object.(*corev1.Node)
			if !ok || node.Name == gone {
				continue
			}
			for _, c := range node.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
					mu.Lock()
					flaps++
					mu.Unlock()
				}
			}
		}
	}()
	if err := unpeer(); err != nil {
		w.Stop()
		return 0, 0, err
	}
	time.Sleep(10 * time.Second)
	w.Stop()
	<-done
	after, err := snapshot()
	if err != nil {
		return 0, 0, err
	}
	for name, s := range before {
		if a, ok := after[name]; !ok || a != s {
			disturbed++
		}
	}
	fmt.Fprintf(os.Stderr, "bench: peers: unpeering %s: %d of the other %d pods disturbed, %d Ready flaps of the other virtual nodes\n", gone, disturbed, len(before), flaps)
	return disturbed, flaps, nil
}

// slope is the least-squares slope of ys against 0, 1, 2, ...: the growth
// per added peer.
func slope(ys []float64) float64 {
	n := float64(len(ys))
	if n < 2 {
		return 0
	}
	var sx, sy, sxy, sxx float64
	for i, y := range ys {
		x := float64(i)
		sx, sy, sxy, sxx = sx+x, sy+y, sxy+x*y, sxx+x*x
	}
	return (n*sxy - sx*sy) / (n*sxx - sx*sx)
}

// percentile is the p-th percentile (nearest rank) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(p/100*float64(len(s))+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

func printPeers(r *peersResult) {
	rss := make([]float64, len(r.consumer))
	cpu := make([]float64, len(r.consumerIdleCPU))
	for i := range r.consumer {
		rss[i] = float64(r.consumer[i].RSS) / 1e6
		cpu[i] = float64(r.consumerIdleCPU[i]) / float64(time.Millisecond)
	}
	t := newValueTable("peers", r.n, fmt.Sprintf("Peers (networking disabled, simulated nodes): one cluster peered with %d others, each cluster's manager a process of its own", r.n))
	row := t.row
	p50, p99 := percentile(r.peerings, 50), percentile(r.peerings, 99)
	row("consumer: liqoctl peer → virtual node Ready, p50", ms(p50), measurement{Unit: "s", Value: seconds(p50)})
	row("consumer: liqoctl peer → virtual node Ready, p99", ms(p99), measurement{Unit: "s", Value: seconds(p99)})
	row(fmt.Sprintf("consumer: peering provider number %d", r.n), ms(r.peerings[len(r.peerings)-1]), measurement{Unit: "s", Value: seconds(r.peerings[len(r.peerings)-1])})
	row("consumer manager RSS, no peer", fmt.Sprintf("%.1f MB", rss[0]), measurement{Unit: "MB", Value: number(rss[0])})
	row(fmt.Sprintf("consumer manager RSS, %d providers", r.n), fmt.Sprintf("%.1f MB", rss[len(rss)-1]), measurement{Unit: "MB", Value: number(rss[len(rss)-1])})
	// The slopes leave out the first peer, which fills the caches every
	// peer shares.
	row("consumer manager RSS per extra provider (slope)", fmt.Sprintf("%.2f MB", slope(rss[1:])), measurement{Unit: "MB", Value: number(slope(rss[1:]))})
	row("consumer manager idle CPU per extra provider (slope)", fmt.Sprintf("%.2f ms/s", slope(cpu[1:])), measurement{Unit: "ms/s", Value: number(slope(cpu[1:]))})
	row("consumer: watches on each provider's API server", fmt.Sprintf("%.0f", r.consumerWatches), measurement{Unit: "watches", Value: number(r.consumerWatches)})
	row("consumer: watches on each provider's API server, a namespace offloaded", fmt.Sprintf("%.0f", r.offloadedWatches), measurement{Unit: "watches", Value: number(r.offloadedWatches)})
	row("consumer: requests per second to each provider, idle", fmt.Sprintf("%.2f", r.consumerRate), measurement{Unit: "requests/s", Value: number(r.consumerRate)})
	row("consumer: watches on its own API server per provider", fmt.Sprintf("%.1f", r.ownWatches), measurement{Unit: "watches", Value: number(r.ownWatches)})
	row("consumer: requests per second on its own API server per provider, idle", fmt.Sprintf("%.2f", r.ownRate), measurement{Unit: "requests/s", Value: number(r.ownRate)})
	row(fmt.Sprintf("consumer manager idle CPU, %d providers", r.n), fmt.Sprintf("%.1f ms/s", cpu[len(cpu)-1]), measurement{Unit: "ms/s", Value: number(cpu[len(cpu)-1])})
	ratio := r.offloaded.Seconds() / r.vanilla.Seconds()
	fmt.Fprintf(t.w, "%d pods Running: own nodes / over %d virtual nodes\t%s / %s (%.2f×)\t\n", 10*r.n, r.n, ms(r.vanilla), ms(r.offloaded), ratio)
	record(measurement{Suite: "peers", Measure: "pods Running, spread over every provider", N: 10 * r.n, Unit: "s", Vanilla: seconds(r.vanilla), Offloaded: seconds(r.offloaded)})
	f99 := percentile(r.fanout, 99)
	row(fmt.Sprintf("ConfigMap update → its copy on each of %d providers, p99", r.n), ms(f99), measurement{Unit: "s", Value: seconds(f99)})
	row("unpeering one: other pods re-created or restarted", fmt.Sprint(r.disturbed), measurement{Unit: "pods", Value: number(float64(r.disturbed))})
	row("unpeering one: Ready flaps of the other virtual nodes", fmt.Sprint(r.flaps), measurement{Unit: "flaps", Value: number(float64(r.flaps))})
	row(fmt.Sprintf("provider: %d consumers peering at once → all virtual nodes Ready", r.n), ms(r.allAtOnce), measurement{Unit: "s", Value: seconds(r.allAtOnce)})
	per := float64(r.provider[1].RSS-r.provider[0].RSS) / 1e6 / float64(r.n)
	row("provider manager RSS per consumer", fmt.Sprintf("%.2f MB", per), measurement{Unit: "MB", Value: number(per)})
	perCPU := float64(r.providerIdleCPU[1]-r.providerIdleCPU[0]) / float64(time.Millisecond) / float64(r.n)
	row("provider manager idle CPU per consumer", fmt.Sprintf("%.2f ms/s", perCPU), measurement{Unit: "ms/s", Value: number(perCPU)})
	row("provider: watches on its API server per consumer", fmt.Sprintf("%.1f", r.providerWatches), measurement{Unit: "watches", Value: number(r.providerWatches)})
	row("provider: requests per second per consumer, idle", fmt.Sprintf("%.2f", r.providerRate), measurement{Unit: "requests/s", Value: number(r.providerRate)})
	t.flush()
}
