package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/liqoctl/offload"
	"github.com/liqo-go/liqo/pkg/proc"
	"github.com/liqo-go/liqo/pkg/testbed"
)

// offloadRun is one Deployment size measured both ways on one cluster pair.
type offloadRun struct {
	n                  int
	vanilla, offloaded result
	// Peak RSS of each controller manager during the offloaded run (with
	// its anonymous and file-backed parts at that sample), and the CPU time
	// both spent on it (creation and deletion).
	rss map[string]proc.Usage
	cpu time.Duration
	// apiVanilla and apiOffloaded are the CPU time both API servers spent
	// on the vanilla and on the offloaded run (creation and deletion).
	apiVanilla, apiOffloaded time.Duration
	// idle is both managers' memory, peered and idle, before the first run
	// (RSS and its anonymous and file-backed parts; CPU unused).
	idle proc.Usage
	// statusLag is, per pod, remote Running → local Running (sorted).
	statusLag []time.Duration
	// writesVanilla and writesOffloaded are the write requests both API
	// servers served during each run, by cluster and "VERB resource".
	writesVanilla, writesOffloaded map[string]map[string]float64
}

// benchOffloading measures, for each client-QPS profile, a Deployment of N
// replicas until every pod is Running: vanilla on the provider's own nodes,
// then offloaded from the consumer into a namespace with the Remote pod
// offloading strategy. The controller managers run as separate processes,
// so that their memory and CPU time can be read from /proc.
func benchOffloading(ctx context.Context, bins *testbed.Binaries, sizes []int, o offloadOptions) (*offloadResult, error) {
	dir, manager, cleanup, err := managerWorkDir(ctx, "offload")
	if err != nil {
		return nil, err
	}
	defer cleanup()
	maxN := 0
	for _, n := range sizes {
		maxN = max(maxN, n)
	}
	out := &offloadResult{runs: map[string][]offloadRun{}}
	for _, p := range offloadProfiles {
		if !o.qpsProfiles[p.flag] {
			continue
		}
		runs, single, err := offloadProfileRuns(ctx, bins, manager, dir, p, sizes, maxN, o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.name, err)
		}
		out.runs[p.name] = runs
		if single != nil {
			out.single = single
		}
	}
	return out, nil
}

// offloadProfile is one way of running the offloading suite: the client
// QPS of every cluster's controllers and, when pinned, each cluster on a
// core of its own (consumer on CPU 0, provider on CPU 1; vanilla runs on
// the provider alone, so on its core alone), as clusters on machines of
// their own would be; unpinned, both share every core.
type offloadProfile struct {
	flag, name string
	qps        float32
	burst      int
	pinned     bool
}

// offloadProfiles are the profiles of the -qps flag, in the order run and
// printed.
var offloadProfiles = []offloadProfile{
	{flag: "default", name: "default client QPS"},
	{flag: "1000", name: "client QPS 1,000", qps: 1000, burst: 2000},
	{flag: "1000-pinned", name: "client QPS 1,000, a core per cluster", qps: 1000, burst: 2000, pinned: true},
}

// offloadResult is the offloading suite's figures: the runs by client-QPS
// profile, and the single-pod latencies (default QPS).
type offloadResult struct {
	runs   map[string][]offloadRun
	single *singleRun
}

// singleRun is pods created one at a time: create → Running, sorted;
// gated are offloaded pods that request resources, so pass the placement
// gate.
type singleRun struct{ vanilla, offloaded, gated []time.Duration }

// offloadOptions are the offloading suite's choices.
type offloadOptions struct {
	// qpsProfiles are the client-QPS profiles to run: "default", "1000".
	qpsProfiles map[string]bool
	// pprofDir, if set, receives CPU profiles of both managers taken over
	// the first pprofSeconds of the largest offloaded run of each profile,
	// and their allocation profiles after it.
	pprofDir     string
	pprofSeconds int
}

func offloadProfileRuns(ctx context.Context, bins *testbed.Binaries, manager, dir string, prof offloadProfile, sizes []int, maxN int, o offloadOptions) ([]offloadRun, *singleRun, error) {
	qps, burst := prof.qps, prof.burst
	// The provider shares half of its nodes (the default): room for maxN.
	providerNodes := testbed.NodePool{Prefix: "worker", Count: 2*maxN/250 + 2, CPU: "64", Memory: "256Gi", Pods: 250}
	spec := func(name string, nodes testbed.NodePool) testbed.ClusterSpec {
		return testbed.ClusterSpec{Name: name, Nodes: []testbed.NodePool{nodes},
			ControllerManagerQPS: qps, ControllerManagerBurst: burst, SchedulerQPS: qps, SchedulerBurst: burst,
			APIServerProfiling: o.pprofDir != ""}
	}
	p, err := startPair(ctx, bins, manager, dir,
		spec("consumer", testbed.NodePool{Prefix: "local", Count: 1}), spec("provider", providerNodes),
		os.Stderr, "--cpu", "100000", "--memory", "100000Gi", "--pods", "100000")
	if err != nil {
		return nil, nil, err
	}
	defer p.Stop()
	consumer, provider, cl, pids := p.tb.Cluster("consumer"), p.tb.Cluster("provider"), p.consumer, p.pids
	if prof.pinned {
		if runtime.NumCPU() < 2 {
			return nil, nil, fmt.Errorf("a core per cluster needs 2 CPUs, this machine has %d", runtime.NumCPU())
		}
		for c, cpu := range map[*testbed.Cluster]string{consumer: "0", provider: "1"} {
			if err := c.PinCPUs(cpu, pids[c.Name]); err != nil {
				return nil, nil, err
			}
		}
	}
	// Every process of the pair, by cluster and component: one reading
	// of their CPU times gives the managers', the API servers' and the
	// breakdown on stderr of where each run's CPU went.
	all := map[string]int{}
	var apiServers, managers []string
	for _, c := range []*testbed.Cluster{consumer, provider} {
		for name, pid := range c.PIDs() {
			all[c.Name+" "+name] = pid
		}
		all[c.Name+" liqo-controller-manager"] = pids[c.Name]
		apiServers, managers = append(apiServers, c.Name+" "+testbed.APIServer), append(managers, c.Name+" liqo-controller-manager")
	}
	var idle proc.Usage
	for _, pid := range pids {
		if u, err := proc.UsageOf(pid); err == nil {
			idle.RSS, idle.RSSAnon, idle.RSSFile = idle.RSS+u.RSS, idle.RSSAnon+u.RSSAnon, idle.RSSFile+u.RSSFile
		}
		if pss, err := proc.PSSOf(pid); err == nil {
			idle.PSS += pss
		}
	}
	var runs []offloadRun
	for _, n := range sizes {
		run := offloadRun{n: n, rss: map[string]proc.Usage{}, idle: idle}
		cpuBefore := cpuOf(all)
		writesBefore, err := clusterWrites(ctx, consumer, provider)
		if err != nil {
			return nil, nil, err
		}
		if run.vanilla, err = deployAndWait(ctx, provider.Client(), n); err != nil {
			return nil, nil, fmt.Errorf("vanilla N=%d: %w", n, err)
		}
		cpuAfter := cpuOf(all)
		run.apiVanilla = spent(cpuBefore, cpuAfter, apiServers)
		fmt.Fprintf(os.Stderr, "bench: N=%d vanilla CPU per pod by process: %s\n", n, cpuPerPod(cpuBefore, cpuAfter, n))
		if run.writesVanilla, err = writesSince(ctx, writesBefore, consumer, provider); err != nil {
			return nil, nil, err
		}
		ns := fmt.Sprintf("offload-%d", n)
		twin, err := offloadNamespace(ctx, cl, p.kubeconfigs["consumer"], ns, "Remote")
		if err != nil {
			return nil, nil, err
		}
		st := newStages(n)
		stopWatch := make(chan struct{})
		st.follow(consumer.Client(), ns, provider.Client(), twin, stopWatch)
		cpuBefore = cpuOf(all)
		if writesBefore, err = clusterWrites(ctx, consumer, provider); err != nil {
			return nil, nil, err
		}
		stopSampling := sampleRSS(pids, run.rss)
		var prof *profiler
		profileName := fmt.Sprintf("qps%g-n%d", qps, n)
		waitProfile := func() {}
		if o.pprofDir != "" && n == maxN {
			prof = &profiler{dir: o.pprofDir, addrs: p.pprof, seconds: o.pprofSeconds, apiServers: map[string]rest.Interface{
				"consumer": consumer.Client().CoreV1().RESTClient(), "provider": provider.Client().CoreV1().RESTClient()},
				controllerManagers: map[string]string{"consumer": consumer.ControllerManagerPprofURL(), "provider": provider.ControllerManagerPprofURL()}}
			waitProfile = prof.cpu(ctx, profileName)
		}
		st.begin()
		run.offloaded, err = deployIn(ctx, consumer.Client(), ns, n)
		stopSampling()
		waitProfile()
		if prof != nil {
			prof.allocs(ctx, profileName)
		}
		close(stopWatch)
		fmt.Fprintf(os.Stderr, "bench: N=%d offloaded stages: %s\n", n, st)
		if err != nil {
			return nil, nil, fmt.Errorf("offloaded N=%d: %w (manager logs in %s)", n, err, dir)
		}
		cpuAfter = cpuOf(all)
		run.cpu, run.apiOffloaded = spent(cpuBefore, cpuAfter, managers), spent(cpuBefore, cpuAfter, apiServers)
		fmt.Fprintf(os.Stderr, "bench: N=%d offloaded CPU per pod by process: %s\n", n, cpuPerPod(cpuBefore, cpuAfter, n))
		run.statusLag = st.statusLag()
		if run.writesOffloaded, err = writesSince(ctx, writesBefore, consumer, provider); err != nil {
			return nil, nil, err
		}
		fmt.Fprintf(os.Stderr, "bench: N=%d vanilla %s, offloaded %s (deleted in %s / %s)\n", n,
			ms(run.vanilla.running), ms(run.offloaded.running), ms(run.vanilla.deleted), ms(run.offloaded.deleted))
		runs = append(runs, run)
	}
	if qps != 0 || prof.pinned {
		return runs, nil, nil
	}
	// One pod at a time, at the default QPS: vanilla on the provider's own
	// nodes, then offloaded.
	single := &singleRun{}
	vns, err := provider.Client().CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "single-vanilla"}}, metav1.CreateOptions{})
	if err != nil {
		return nil, nil, err
	}
	if single.vanilla, err = podLatencies(ctx, provider.Client(), vns.Name, "vanilla", singlePods, singlePodPause, nil); err != nil {
		return nil, nil, fmt.Errorf("single pods, vanilla: %w", err)
	}
	if _, err := offloadNamespace(ctx, cl, p.kubeconfigs["consumer"], "single-offloaded", "Remote"); err != nil {
		return nil, nil, err
	}
	if single.offloaded, err = podLatencies(ctx, consumer.Client(), "single-offloaded", "offloaded", singlePods, singlePodPause, nil); err != nil {
		return nil, nil, fmt.Errorf("single pods, offloaded: %w", err)
	}
	// The same, each pod requesting a little CPU: held by the placement
	// gate until checked against the provider's fit summary.
	if single.gated, err = podLatencies(ctx, consumer.Client(), "single-offloaded", "gated", singlePods, singlePodPause,
		corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}); err != nil {
		return nil, nil, fmt.Errorf("single pods, offloaded through the placement gate: %w", err)
	}
	return runs, single, nil
}

// clusterWrites reads each cluster's API server write counts, by name.
func clusterWrites(ctx context.Context, clusters ...*testbed.Cluster) (map[string]map[string]float64, error) {
	out := map[string]map[string]float64{}
	for _, c := range clusters {
		w, err := apiWrites(ctx, c.Client())
		if err != nil {
			return nil, fmt.Errorf("cluster %s: %w", c.Name, err)
		}
		out[c.Name] = w
	}
	return out, nil
}

// writesSince is what each cluster's API server wrote since before.
func writesSince(ctx context.Context, before map[string]map[string]float64, clusters ...*testbed.Cluster) (map[string]map[string]float64, error) {
	after, err := clusterWrites(ctx, clusters...)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]float64{}
	for name := range after {
		out[name] = writeDelta(before[name], after[name])
	}
	return out, nil
}

// startManager runs one controller manager process, with extra flags
// after the common ones; stop ends it.
func startManager(ctx context.Context, bin, kubeconfig, id, logPath, pprofAddr string, extra ...string) (int, func(), error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return 0, nil, err
	}
	// As the playground runs it on a bare cluster: it makes its namespace, CRDs
	// and webhook registration itself.
	cmd := exec.CommandContext(ctx, bin, append([]string{"--kubeconfig", kubeconfig, "--cluster-id", id, "--self-provision",
		"--pprof-address", pprofAddr}, extra...)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return 0, nil, err
	}
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = logFile.Close()
	}
	return cmd.Process.Pid, stop, nil
}

// offloadNamespace creates ns and offloads it with liqoctl offload and a
// pod offloading strategy (Local still reflects the other kinds); it
// returns the twin namespace's name.
func offloadNamespace(ctx context.Context, cl client.Client, kubeconfig, ns, strategy string) (string, error) {
	if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return "", err
	}
	cmd := offload.NewCommand()
	cmd.SetOut(io.Discard)
	cmd.SetArgs([]string{"namespace", ns, "--kubeconfig", kubeconfig, "--pod-offloading-strategy", strategy})
	if err := cmd.ExecuteContext(ctx); err != nil {
		return "", fmt.Errorf("offloading %s: %w", ns, err)
	}
	var off offv1beta1.NamespaceOffloading
	err := cl.Get(ctx, types.NamespacedName{Namespace: ns, Name: offv1beta1.NamespaceOffloadingName}, &off)
	return off.Status.RemoteNamespaceName, err
}

// spent is the CPU the named processes spent between two readings (one
// gone by the second counts nothing).
func spent(before, after map[string]time.Duration, names []string) time.Duration {
	var total time.Duration
	for _, name := range names {
		if a, ok := after[name]; ok {
			total += a - before[name]
		}
	}
	return total
}

// cpuPerPod formats the CPU each process spent between two readings, per
// pod, largest first.
func cpuPerPod(before, after map[string]time.Duration, n int) string {
	names := slices.Collect(maps.Keys(after))
	slices.SortFunc(names, func(a, b string) int { return cmp.Compare(after[b]-before[b], after[a]-before[a]) })
	parts := make([]string, 0, len(names))
	for _, name := range names {
		parts = append(parts, fmt.Sprintf("%s %.1f ms", name, float64(after[name]-before[name])/float64(time.Millisecond)/float64(n)))
	}
	return strings.Join(parts, ", ")
}

// sampleRSS records each process's usage at its peak RSS (with its PSS
// at that sample), sampled every 100 ms until stopped.
func sampleRSS(pids map[string]int, peak map[string]proc.Usage) func() {
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		wait.NonSlidingUntil(func() {
			for name, pid := range pids {
				if u, err := proc.UsageOf(pid); err == nil && u.RSS > peak[name].RSS {
					u.PSS, _ = proc.PSSOf(pid)
					peak[name] = u
				}
			}
		}, 100*time.Millisecond, done)
	}()
	return func() { close(done); wg.Wait() }
}

func printOffloading(r *offloadResult) {
	all := r.runs
	fmt.Fprintln(tables, "\nOffloading: Deployment of N → all N pods Running (vanilla: on the provider's own nodes; offloaded: from the consumer, namespace with podOffloadingStrategy Remote); CPU per pod covers creation and deletion")
	w := tabwriter.NewWriter(tables, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "profile\tN\tvanilla\toffloaded\tratio\tdelete vanilla\tdelete offloaded\tRSS consumer mgr\tRSS provider mgr\tCPU/pod\tAPI servers CPU/pod, vanilla\toffloaded\tratio\t")
	for _, prof := range offloadProfiles {
		name := prof.name
		for _, r := range all[name] {
			perPod := func(d time.Duration) float64 { return 1000 * d.Seconds() / float64(r.n) }
			fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%.2f×\t%s\t%s\t%d MB\t%d MB\t%.1f ms\t%.1f ms\t%.1f ms\t%.2f×\t\n", name, r.n,
				ms(r.vanilla.running), ms(r.offloaded.running), r.offloaded.running.Seconds()/r.vanilla.running.Seconds(),
				ms(r.vanilla.deleted), ms(r.offloaded.deleted), r.rss["consumer"].RSS>>20, r.rss["provider"].RSS>>20,
				perPod(r.cpu), perPod(r.apiVanilla), perPod(r.apiOffloaded), r.apiOffloaded.Seconds()/r.apiVanilla.Seconds())
			m := measurement{Suite: "offloading", N: r.n, Profile: name, Unit: "s", QPS: float64(prof.qps)}
			for _, f := range []struct {
				measure            string
				vanilla, offloaded time.Duration
			}{{"create → all Running", r.vanilla.running, r.offloaded.running}, {"delete → all gone", r.vanilla.deleted, r.offloaded.deleted}} {
				m.Measure, m.Vanilla, m.Offloaded = f.measure, seconds(f.vanilla), seconds(f.offloaded)
				record(m)
			}
			m.Vanilla, m.Offloaded, m.Unit = nil, nil, "MB"
			for _, mgr := range []string{"consumer", "provider"} {
				m.Measure, m.Value = "peak RSS, "+mgr+" manager", megabytes(r.rss[mgr].RSS)
				record(m)
				m.Measure, m.Value = "peak RSS, "+mgr+" manager: anonymous", megabytes(r.rss[mgr].RSSAnon)
				record(m)
				m.Measure, m.Value = "peak RSS, "+mgr+" manager: file-backed", megabytes(r.rss[mgr].RSSFile)
				record(m)
				m.Measure, m.Value = "PSS at the peak RSS, "+mgr+" manager", megabytes(r.rss[mgr].PSS)
				record(m)
			}
			m.Measure, m.Unit, m.Value = "CPU per offloaded pod, both managers", "ms", number(perPod(r.cpu))
			record(m)
			m.Measure, m.Unit, m.Value = "both managers' RSS, peered and idle", "MB", megabytes(r.idle.RSS)
			record(m)
			m.Measure, m.Value = "both managers' RSS, peered and idle: anonymous", megabytes(r.idle.RSSAnon)
			record(m)
			m.Measure, m.Value = "both managers' RSS, peered and idle: file-backed", megabytes(r.idle.RSSFile)
			record(m)
			m.Measure, m.Value = "both managers' PSS, peered and idle", megabytes(r.idle.PSS)
			record(m)
			m.Measure, m.Unit, m.Value, m.Vanilla, m.Offloaded = "API servers' CPU per pod, both clusters", "ms", nil, number(perPod(r.apiVanilla)), number(perPod(r.apiOffloaded))
			record(m)
			v := total(r.writesVanilla["consumer"]) + total(r.writesVanilla["provider"])
			o := total(r.writesOffloaded["consumer"]) + total(r.writesOffloaded["provider"])
			m.Measure, m.Unit, m.Vanilla, m.Offloaded = "API write requests per pod, both API servers", "requests", number(v/float64(r.n)), number(o/float64(r.n))
			record(m)
			m.Vanilla, m.Offloaded, m.Unit = nil, nil, "s"
			for _, q := range []float64{0.5, 0.99} {
				m.Measure, m.Value = fmt.Sprintf("status lag, remote Running → local Running, p%.0f", 100*q), seconds(quantile(r.statusLag, q))
				record(m)
			}
		}
	}
	w.Flush()
	for _, prof := range offloadProfiles {
		name := prof.name
		if runs := all[name]; len(runs) > 0 {
			i := runs[0].idle
			fmt.Fprintf(tables, "%s: both managers' RSS, peered and idle: %d MB (anonymous %d MB, file-backed %d MB); PSS %d MB (their one binary's pages counted once)\n",
				name, i.RSS>>20, i.RSSAnon>>20, i.RSSFile>>20, i.PSS>>20)
		}
		for _, r := range all[name] {
			c, p := r.rss["consumer"], r.rss["provider"]
			fmt.Fprintf(tables, "%s, N=%d: peak RSS, consumer / provider manager: %d MB (anonymous %d, file-backed %d) / %d MB (anonymous %d, file-backed %d); PSS at those samples %d + %d MB\n",
				name, r.n, c.RSS>>20, c.RSSAnon>>20, c.RSSFile>>20, p.RSS>>20, p.RSSAnon>>20, p.RSSFile>>20, c.PSS>>20, p.PSS>>20)
			v := total(r.writesVanilla["consumer"]) + total(r.writesVanilla["provider"])
			oc, op := total(r.writesOffloaded["consumer"]), total(r.writesOffloaded["provider"])
			fmt.Fprintf(tables, "%s, N=%d: API writes per pod (both API servers, whoever sent them, creation and deletion): vanilla %.1f, offloaded %.1f (consumer %.1f + provider %.1f)\n",
				name, r.n, v/float64(r.n), (oc+op)/float64(r.n), oc/float64(r.n), op/float64(r.n))
			fmt.Fprintf(tables, "    vanilla: %s\n    offloaded, consumer: %s\n    offloaded, provider: %s\n",
				perPodSummary(only(r.writesVanilla["provider"], ""), r.n, 10), perPodSummary(only(r.writesOffloaded["consumer"], ""), r.n, 10),
				perPodSummary(only(r.writesOffloaded["provider"], ""), r.n, 10))
			fmt.Fprintf(tables, "    reads per pod, vanilla: %s\n    offloaded, consumer: %s\n    offloaded, provider: %s\n",
				perPodSummary(only(r.writesVanilla["provider"], readPrefix), r.n, 6), perPodSummary(only(r.writesOffloaded["consumer"], readPrefix), r.n, 6),
				perPodSummary(only(r.writesOffloaded["provider"], readPrefix), r.n, 6))
			fmt.Fprintf(tables, "    admission webhook calls per pod, offloaded, consumer: %s; provider: %s\n",
				perPodSummary(only(r.writesOffloaded["consumer"], webhookPrefix), r.n, 6), perPodSummary(only(r.writesOffloaded["provider"], webhookPrefix), r.n, 6))
			fmt.Fprintf(tables, "%s, N=%d: status lag, remote pod Running → local pod Running (%d pods): p50 %s, p99 %s, max %s\n", name, r.n,
				len(r.statusLag), ms(quantile(r.statusLag, 0.5)), ms(quantile(r.statusLag, 0.99)), ms(quantile(r.statusLag, 1)))
		}
	}
	if r.single != nil {
		v, o := r.single.vanilla, r.single.offloaded
		fmt.Fprintf(tables, "\nOne pod at a time (default client QPS, %d pods, one every %s): create → Running\n", singlePods, ms(singlePodPause))
		fmt.Fprintln(w, "\tp50\tp90\tp99\tmax\t")
		for _, row := range []struct {
			name string
			d    []time.Duration
		}{{"vanilla", v}, {"offloaded", o}} {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t\n", row.name, ms(quantile(row.d, 0.5)), ms(quantile(row.d, 0.9)), ms(quantile(row.d, 0.99)), ms(quantile(row.d, 1)))
		}
		fmt.Fprintf(w, "overhead (offloaded − vanilla)\t%s\t%s\t%s\t%s\t\n", ms(quantile(o, 0.5)-quantile(v, 0.5)), ms(quantile(o, 0.9)-quantile(v, 0.9)),
			ms(quantile(o, 0.99)-quantile(v, 0.99)), ms(quantile(o, 1)-quantile(v, 1)))
		if g := r.single.gated; len(g) > 0 {
			fmt.Fprintf(w, "offloaded, requesting 10m CPU (placement gate)\t%s\t%s\t%s\t%s\t\n", ms(quantile(g, 0.5)), ms(quantile(g, 0.9)), ms(quantile(g, 0.99)), ms(quantile(g, 1)))
			fmt.Fprintf(w, "placement gate overhead (gated − offloaded)\t%s\t%s\t%s\t%s\t\n", ms(quantile(g, 0.5)-quantile(o, 0.5)), ms(quantile(g, 0.9)-quantile(o, 0.9)),
				ms(quantile(g, 0.99)-quantile(o, 0.99)), ms(quantile(g, 1)-quantile(o, 1)))
			for _, q := range []float64{0.5, 0.99} {
				record(measurement{Suite: "offloading", Measure: fmt.Sprintf("one pod at a time through the placement gate, create → Running, p%.0f", 100*q), N: len(g),
					Profile: "default client QPS", Unit: "s", Vanilla: seconds(quantile(o, q)), Offloaded: seconds(quantile(g, q))})
			}
		}
		w.Flush()
		for _, q := range []float64{0.5, 0.99} {
			record(measurement{Suite: "offloading", Measure: fmt.Sprintf("one pod at a time, create → Running, p%.0f", 100*q), N: len(o),
				Profile: "default client QPS", Unit: "s", Vanilla: seconds(quantile(v, q)), Offloaded: seconds(quantile(o, q))})
		}
	}
}
