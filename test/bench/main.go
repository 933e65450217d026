// Command bench prints the performance figures of the project, run with
// `make bench`: the vanilla baselines that the offloading figures are
// compared against (testbed cluster start time and the time from Deployment
// creation to all pods Running on simulated nodes, at the upstream default
// client QPS and at QPS 1,000), and the time from liqoctl peer to a Ready
// virtual node, and the time for a Deployment offloaded to a provider to be
// all Running beside the same Deployment on the provider's own nodes, with
// the controller managers' memory and CPU time; and the reflection of N
// ConfigMaps and N Services of an offloaded namespace into its twin on the
// provider (creation, update latency, deletion, the managers' RSS and CPU);
// and on real nodes, the time to a Ready node, pod create → Running, and the
// node's own memory; and the network fabric: connect → Connected, pod to
// pod throughput and request time through the tunnel beside the same
// within a cluster; and the dashboard's page, from load to every peering
// of a consumer of 20 providers drawn.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/liqo-go/liqo/pkg/testbed"
)

func main() {
	sizes := flag.String("n", "100,1000", "comma-separated sizes: Deployment replicas; for the reflection suite, ConfigMaps and Services (N of each)")
	suites := flag.String("suites", "vanilla,peering,offloading,reflection,realnodes,fabric,peers,peers-fabric,dashboard,placement,mcs", "comma-separated suites to run: vanilla, peering, offloading, reflection, realnodes, fabric, peers, peers-fabric, dashboard, placement, mcs")
	peers := flag.Int("peers", 20, "clusters peered with one cluster, as its providers and then as its consumers (peers suite)")
	fabricPeers := flag.Int("fabric-peers", 4, "real-node providers one real-node cluster consumes with the network fabric on (peers-fabric suite)")
	dashboardPeers := flag.Int("dashboard-peers", 20, "providers of the consumer the dashboard shows (dashboard suite)")
	dashboardLoads := flag.Int("dashboard-loads", 5, "page loads timed (dashboard suite)")
	fabricConnects := flag.Int("fabric-connects", 3, "liqoctl network connect runs timed (fabric suite)")
	fabricMB := flag.Int("fabric-mb", 200, "size of the file downloaded pod to pod (fabric suite)")
	fabricRequests := flag.Int("fabric-requests", 20, "small requests timed each way (fabric suite)")
	mcsServices := flag.Int("mcs-services", 100, "Services exported, half from each cluster (mcs suite)")
	realStarts := flag.Int("real-node-starts", 3, "real-node clusters started for the node Ready time (realnodes suite)")
	realPods := flag.Int("real-node-pods", 30, "pods started one at a time on the real node (realnodes suite)")
	proxyServices := flag.Int("proxy-services", 1000, "Services of the kube-proxy mode comparison (realnodes suite)")
	repeers := flag.Int("repeers", 5, "re-peerings (unpeer then peer) measured after the first peering")
	rates := flag.String("reflection-rates", "100,200", "comma-separated update rates (per second) of the reflection suite's paced latency rounds, each followed by a burst round")
	qpsProfiles := flag.String("qps", "default,1000,1000-pinned", "comma-separated profiles of the offloading suite: default (client QPS the upstream 20/50), 1000 (client QPS 1,000), 1000-pinned (QPS 1,000, consumer on CPU 0 and provider on CPU 1)")
	pprofDir := flag.String("pprof", "", "directory for pprof profiles of both liqo controller managers, both API servers and both kube-controller-managers during the largest offloaded run of each QPS profile (CPU over -pprof-seconds from its start; allocations of the liqo managers after it); their top entries go to stderr")
	pprofSeconds := flag.Int("pprof-seconds", 20, "length of the CPU profiles of -pprof")
	output := flag.String("o", "table", "output: table (for people) or json (every figure as one object of a JSON array, for comparing versions)")
	flag.Parse()
	switch *output {
	case "table":
	case "json":
		tables = io.Discard
	default:
		fmt.Fprintf(os.Stderr, "-o: %q is neither table nor json\n", *output)
		os.Exit(2)
	}
	ns, err := parseSizes(*sizes)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	want := map[string]bool{}
	for _, s := range strings.Split(*suites, ",") {
		switch s = strings.TrimSpace(s); s {
		case "vanilla", "peering", "offloading", "reflection", "realnodes", "fabric", "peers", "peers-fabric", "dashboard", "placement", "mcs":
			want[s] = true
		default:
			fmt.Fprintf(os.Stderr, "-suites: unknown suite %q (want vanilla, peering, offloading, reflection, realnodes, fabric, peers, peers-fabric, dashboard, placement, mcs)\n", s)
			os.Exit(2)
		}
	}
	updateRates, err := parseRates(*rates)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx := context.Background()
	bins, err := testbed.EnsureBinaries(ctx, testbed.BuildOptions{Progress: os.Stderr, RealNodes: want["realnodes"] || want["fabric"] || want["peers-fabric"] || want["mcs"]})
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	if want["vanilla"] {
		if err := run(ctx, bins, ns); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
	}
	if want["peering"] {
		r, err := benchPeering(ctx, bins, *repeers)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: peering:", err)
			os.Exit(1)
		}
		printPeering(r)
	}
	if want["offloading"] {
		o := offloadOptions{qpsProfiles: map[string]bool{}, pprofDir: *pprofDir, pprofSeconds: *pprofSeconds}
		var known []string
		for _, p := range offloadProfiles {
			known = append(known, p.flag)
		}
		for _, q := range strings.Split(*qpsProfiles, ",") {
			if q = strings.TrimSpace(q); !slices.Contains(known, q) {
				fmt.Fprintf(os.Stderr, "-qps: unknown profile %q (want %s)\n", q, strings.Join(known, ", "))
				os.Exit(2)
			}
			o.qpsProfiles[q] = true
		}
		if o.pprofDir != "" {
			if err := os.MkdirAll(o.pprofDir, 0o755); err != nil {
				fmt.Fprintln(os.Stderr, "bench:", err)
				os.Exit(1)
			}
		}
		r, err := benchOffloading(ctx, bins, ns, o)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: offloading:", err)
			os.Exit(1)
		}
		printOffloading(r)
	}
	if want["reflection"] {
		r, err := benchReflection(ctx, bins, ns, updateRates)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: reflection:", err)
			os.Exit(1)
		}
		printReflection(r)
	}
	if want["realnodes"] {
		r, err := benchRealNodes(ctx, bins, *realStarts, *realPods)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: realnodes:", err)
			os.Exit(1)
		}
		printRealNodes(r)
		pr, err := benchProxyModes(ctx, bins, *proxyServices)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: realnodes:", err)
			os.Exit(1)
		}
		printProxyModes(pr)
	}
	if want["fabric"] {
		r, err := benchFabric(ctx, bins, *fabricConnects, *fabricMB, *fabricRequests)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: fabric:", err)
			os.Exit(1)
		}
		printFabric(r)
	}
	if want["peers"] {
		if *peers < 2 {
			fmt.Fprintln(os.Stderr, "-peers: at least 2")
			os.Exit(2)
		}
		r, err := benchPeers(ctx, bins, *peers)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: peers:", err)
			os.Exit(1)
		}
		printPeers(r)
	}
	if want["peers-fabric"] {
		if *fabricPeers < 2 {
			fmt.Fprintln(os.Stderr, "-fabric-peers: at least 2")
			os.Exit(2)
		}
		r, err := benchPeersFabric(ctx, bins, *fabricPeers)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: peers-fabric:", err)
			os.Exit(1)
		}
		printPeersFabric(r)
	}
	if want["dashboard"] {
		if *dashboardPeers < 1 || *dashboardLoads < 1 {
			fmt.Fprintln(os.Stderr, "-dashboard-peers and -dashboard-loads must be positive")
			os.Exit(2)
		}
		r, err := benchDashboard(ctx, bins, *dashboardPeers, *dashboardLoads)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: dashboard:", err)
			os.Exit(1)
		}
		printDashboard(r)
	}
	if want["placement"] {
		printPlacement(benchPlacement(1000, 30))
	}
	if want["mcs"] {
		if *mcsServices < 1 {
			fmt.Fprintln(os.Stderr, "-mcs-services must be positive")
			os.Exit(2)
		}
		r, err := benchMCS(ctx, bins, *mcsServices)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: mcs:", err)
			os.Exit(1)
		}
		printMCS(r)
	}
	if *output == "json" {
		if err := writeJSON(os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
	}
}

func parseSizes(s string) ([]int, error) {
	var ns []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("-n: %q is not a positive number", f)
		}
		ns = append(ns, n)
	}
	return ns, nil
}

func parseRates(s string) ([]float64, error) {
	var rates []float64
	for _, f := range strings.Split(s, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || r <= 0 {
			return nil, fmt.Errorf("-reflection-rates: %q is not a positive number", f)
		}
		rates = append(rates, r)
	}
	return rates, nil
}

// profile is a control-plane client rate-limit setting.
type profile struct {
	name     string
	qps      float32
	burst    int
	startups []time.Duration
	runs     map[int]result
}

func run(ctx context.Context, bins *testbed.Binaries, sizes []int) error {
	maxN := 0
	for _, n := range sizes {
		maxN = max(maxN, n)
	}
	// Enough simulated capacity that scheduling never waits for room.
	nodes := testbed.NodePool{Prefix: "worker", Count: maxN/200 + 2, CPU: "64", Memory: "256Gi", Pods: 250}

	profiles := []*profile{
		{name: "default client QPS (20 kcm / 50 scheduler)"},
		{name: "client QPS 1,000", qps: 1000, burst: 2000},
	}
	for _, p := range profiles {
		p.runs = map[int]result{}
		spec := testbed.ClusterSpec{
			Name: "bench", Nodes: []testbed.NodePool{nodes},
			ControllerManagerQPS: p.qps, ControllerManagerBurst: p.burst,
			SchedulerQPS: p.qps, SchedulerBurst: p.burst,
		}
		start := time.Now()
		tb, err := testbed.Start(ctx, testbed.Options{Binaries: bins}, spec)
		if err != nil {
			return err
		}
		p.startups = append(p.startups, time.Since(start))
		fmt.Fprintf(os.Stderr, "bench: %s: cluster started in %s\n", p.name, p.startups[0].Round(time.Millisecond))
		for _, n := range sizes {
			r, err := deployAndWait(ctx, tb.Clusters[0].Client(), n)
			if err != nil {
				tb.Stop()
				return fmt.Errorf("%s, N=%d: %w", p.name, n, err)
			}
			fmt.Fprintf(os.Stderr, "bench: %s: N=%d all Running in %s, deleted in %s\n", p.name, n, r.running.Round(time.Millisecond), r.deleted.Round(time.Millisecond))
			p.runs[n] = r
		}
		tb.Stop()
	}
	printTable(profiles, sizes)
	return nil
}

func printTable(profiles []*profile, sizes []int) {
	w := tabwriter.NewWriter(tables, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tables, "\nVanilla baselines (testbed cluster, kwok nodes, warm binary cache)")
	fmt.Fprintln(w, "profile\tcluster start\t\t")
	for _, p := range profiles {
		fmt.Fprintf(w, "%s\t%s\t\t\n", p.name, p.startups[0].Round(time.Millisecond))
		record(measurement{Suite: "vanilla", Measure: "cluster start", Profile: p.name, QPS: float64(p.qps), Unit: "s", Value: seconds(p.startups[0])})
	}
	w.Flush()
	fmt.Fprintln(tables)
	fmt.Fprintln(w, "profile\tN\tcreate → all Running\tdelete → all gone\t")
	for _, p := range profiles {
		for _, n := range sizes {
			r := p.runs[n]
			fmt.Fprintf(w, "%s\t%d\t%s\t%s\t\n", p.name, n, r.running.Round(10*time.Millisecond), r.deleted.Round(10*time.Millisecond))
			record(measurement{Suite: "vanilla", Measure: "create → all Running", N: n, Profile: p.name, QPS: float64(p.qps), Unit: "s", Value: seconds(r.running)})
			record(measurement{Suite: "vanilla", Measure: "delete → all gone", N: n, Profile: p.name, QPS: float64(p.qps), Unit: "s", Value: seconds(r.deleted)})
		}
	}
	w.Flush()
}
