package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/clientcfg"
	"github.com/liqo-go/liqo/pkg/proc"
	"github.com/liqo-go/liqo/pkg/testbed"
)

// The reflection suite: N ConfigMaps and N Services created in a namespace
// offloaded with the Local pod offloading strategy (no pods needed), timed
// until their copies exist in the twin namespace on the provider; then
// each object updated once at each steady rate and once all at once, timed from
// the local Update call returning to the remote copy carrying the new value
// (a watch on the twin namespace); then all deleted, timed until no copy is
// left. The controller managers (the consumer's runs the virtual kubelet
// and its reflection) run as separate processes, for their RSS and CPU time.

const (
	// reflectionLabel marks the bench's objects; their copies keep it, and
	// the provider-side watch selects on it.
	reflectionLabel = "liqo-bench"
	// seqKey carries each update's value: a ConfigMap data key, a Service
	// label.
	seqKey = "seq"
	// reflectionWorkers is how many client calls the bench keeps in flight
	// when creating, burst-updating and deleting.
	reflectionWorkers = 64
	// reflectionWait bounds every wait for the remote copies.
	reflectionWait = 5 * time.Minute
)

// Reflected kinds, as printed.
const (
	kindConfigMaps = "ConfigMaps"
	kindServices   = "Services"
)

// reflectionPhases are the phases whose CPU time is reported.
var reflectionPhases = []string{"create", "update", "delete"}

// kindRun is one kind's figures for one size.
type kindRun struct {
	// reflected is the time from the first create call to the last copy
	// seen; lag is, per object, from its create call returning to its copy
	// seen.
	reflected time.Duration
	lag       []time.Duration
	// updates are the update rounds' latencies, the paced rates' then the
	// burst's.
	updates []updateRound
	// deleted is the time from the first delete call to the last copy gone.
	deleted time.Duration
}

// updateRound is one update of every object of a kind: paced at rate
// updates per second, or all at once (rate 0).
type updateRound struct {
	rate float64
	lat  []time.Duration
	// early counts copies seen before the update call returned (counted
	// as 0).
	early int
}

func (u updateRound) String() string {
	if u.rate == 0 {
		return "burst (all at once)"
	}
	return fmt.Sprintf("paced %g/s", u.rate)
}

// reflectionRun is one size measured on the cluster pair.
type reflectionRun struct {
	n int
	// createCalls and deleteCalls are the wall times of the 2N local calls.
	createCalls, deleteCalls time.Duration
	kinds                    map[string]*kindRun
	// Each controller manager's RSS before the run, at its peak and at its
	// end; its CPU time per phase; the two API servers' CPU time per phase.
	rssBefore, rssFinal map[string]int64
	rssPeak             map[string]proc.Usage
	cpu                 map[string]map[string]time.Duration // phase → manager
	apiCPU              map[string]time.Duration            // phase
}

// benchReflection runs the suite for each size on one cluster pair.
func benchReflection(ctx context.Context, bins *testbed.Binaries, sizes []int, rates []float64) (runs []reflectionRun, err error) {
	dir, err := os.MkdirTemp("", "liqo-bench-reflection-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err == nil {
			_ = os.RemoveAll(dir)
		} else {
			fmt.Fprintf(os.Stderr, "bench: reflection: the controller managers' logs are kept in %s\n", dir)
		}
	}()
	manager, err := buildManager(ctx, dir)
	if err != nil {
		return nil, err
	}

	p, err := startPair(ctx, bins, manager, dir,
		testbed.ClusterSpec{Name: "consumer", Nodes: []testbed.NodePool{{Prefix: "local", Count: 1}}},
		testbed.ClusterSpec{Name: "provider", Nodes: []testbed.NodePool{{Prefix: "worker", Count: 2}}}, io.Discard)
	if err != nil {
		return nil, err
	}
	defer p.Stop()
	defer func() {
		if err != nil {
			p.tailLogs()
		}
	}()
	consumer, provider, cl, pids, logs := p.tb.Cluster("consumer"), p.tb.Cluster("provider"), p.consumer, p.pids, p.logs
	local, err := kubernetes.NewForConfig(clientcfg.Protobuf(consumer.Config))
	if err != nil {
		return nil, err
	}
	remote, err := kubernetes.NewForConfig(clientcfg.Protobuf(provider.Config))
	if err != nil {
		return nil, err
	}
	apiServers := map[string]int{
		"consumer": consumer.PIDs()[testbed.APIServer], "provider": provider.PIDs()[testbed.APIServer]}
	for _, n := range sizes {
		ns := fmt.Sprintf("reflect-%d", n)
		twin, err := offloadNamespace(ctx, cl, p.kubeconfigs["consumer"], ns, "Local")
		if err != nil {
			return nil, err
		}
		if err := waitRootCACopy(ctx, remote, twin); err != nil {
			return nil, err
		}
		run, err := reflectOnce(ctx, local, remote, ns, twin, n, rates, pids, apiServers)
		if err != nil {
			return nil, fmt.Errorf("size %d: %w", n, err)
		}
		for name, path := range logs {
			if c := errorLines(path); c > 0 {
				fmt.Fprintf(os.Stderr, "bench: reflection: N=%d: the %s manager's log has %d lines mentioning errors so far\n", n, name, c)
			}
		}
		runs = append(runs, run)
	}
	return runs, nil
}

// waitRootCACopy waits for the copy of the namespace's root CA ConfigMap
// in the twin: the reflection is watching the namespace.
func waitRootCACopy(ctx context.Context, remote kubernetes.Interface, twin string) error {
	start := time.Now()
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		_, err := remote.CoreV1().ConfigMaps(twin).Get(ctx, "liqo-kube-root-ca.crt", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	switch {
	case err == nil:
		fmt.Fprintf(os.Stderr, "bench: reflection: root CA copy in %s after %s\n", twin, ms(time.Since(start)))
		return nil
	case ctx.Err() == nil && wait.Interrupted(err):
		return fmt.Errorf("the root CA ConfigMap was not reflected into %s within a minute", twin)
	default:
		return err
	}
}

// reflectObjects is what the bench does with one kind's N local objects.
type reflectObjects struct {
	name   string
	create func(ctx context.Context, i int) error
	update func(ctx context.Context, i int, seq string) error
	delete func(ctx context.Context, i int) error
	copies *copies
}

func benchName(i int) string { return fmt.Sprintf("bench-%05d", i) }

func configMapObjects(cs kubernetes.Interface, ns string, n int) *reflectObjects {
	api := cs.CoreV1().ConfigMaps(ns)
	objs := make([]*corev1.ConfigMap, n)
	return &reflectObjects{name: kindConfigMaps,
		create: func(ctx context.Context, i int) error {
			cm, err := api.Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: benchName(i), Labels: map[string]string{reflectionLabel: "reflection"}},
				Data:       map[string]string{seqKey: "created", "payload": strings.Repeat("x", 256)},
			}, metav1.CreateOptions{})
			objs[i] = cm
			return err
		},
		update: func(ctx context.Context, i int, seq string) error {
			return updateFresh(ctx, api, &objs[i], func(cm *corev1.ConfigMap) { cm.Data[seqKey] = seq })
		},
		delete: func(ctx context.Context, i int) error {
			return api.Delete(ctx, benchName(i), metav1.DeleteOptions{})
		},
		copies: newCopies(func(o metav1.Object) string { return o.(*corev1.ConfigMap).Data[seqKey] }),
	}
}

func serviceObjects(cs kubernetes.Interface, ns string, n int) *reflectObjects {
	api := cs.CoreV1().Services(ns)
	objs := make([]*corev1.Service, n)
	return &reflectObjects{name: kindServices,
		create: func(ctx context.Context, i int) error {
			svc, err := api.Create(ctx, &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: benchName(i),
					Labels: map[string]string{reflectionLabel: "reflection", seqKey: "created"}},
				Spec: corev1.ServiceSpec{
					Type:     corev1.ServiceTypeClusterIP,
					Selector: map[string]string{"app": benchName(i)},
					Ports:    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}},
				},
			}, metav1.CreateOptions{})
			objs[i] = svc
			return err
		},
		update: func(ctx context.Context, i int, seq string) error {
			return updateFresh(ctx, api, &objs[i], func(svc *corev1.Service) { svc.Labels[seqKey] = seq })
		},
		delete: func(ctx context.Context, i int) error {
			return api.Delete(ctx, benchName(i), metav1.DeleteOptions{})
		},
		copies: newCopies(func(o metav1.Object) string { return o.GetLabels()[seqKey] }),
	}
}

// reflectOnce runs the suite's phases for one size in one offloaded
// namespace.
func reflectOnce(ctx context.Context, local, remote kubernetes.Interface, ns, twin string, n int, rates []float64,
	managers, apiServers map[string]int) (reflectionRun, error) {
	run := reflectionRun{n: n, kinds: map[string]*kindRun{},
		rssPeak: map[string]proc.Usage{}, rssFinal: map[string]int64{},
		cpu: map[string]map[string]time.Duration{}, apiCPU: map[string]time.Duration{}}
	kinds := []*reflectObjects{configMapObjects(local, ns, n), serviceObjects(local, ns, n)}
	for _, k := range kinds {
		run.kinds[k.name] = &kindRun{}
	}

	// The watch on the twin namespace: only the bench's copies.
	stop := make(chan struct{})
	defer close(stop)
	f := informers.NewSharedInformerFactoryWithOptions(remote, 0, informers.WithNamespace(twin),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = reflectionLabel + "=reflection" }))
	infs := []cache.SharedIndexInformer{f.Core().V1().ConfigMaps().Informer(), f.Core().V1().Services().Informer()}
	for i, inf := range infs {
		if _, err := inf.AddEventHandler(kinds[i].copies.handler()); err != nil {
			return run, err
		}
	}
	f.Start(stop)
	if !cache.WaitForCacheSync(stop, infs[0].HasSynced, infs[1].HasSynced) {
		return run, errors.New("the twin namespace's watch did not sync")
	}

	run.rssBefore = usage(managers, func(u proc.Usage) int64 { return u.RSS })
	stopSampling := sampleRSS(managers, run.rssPeak)
	defer func() {
		if stopSampling != nil {
			stopSampling()
		}
	}()
	phaseCPU := func(phase string, body func() error) error {
		m0, a0 := cpuOf(managers), cpuOf(apiServers)
		err := body()
		m1, a1 := cpuOf(managers), cpuOf(apiServers)
		run.cpu[phase] = map[string]time.Duration{}
		for name := range m1 {
			run.cpu[phase][name] = m1[name] - m0[name]
			run.apiCPU[phase] += a1[name] - a0[name]
		}
		return err
	}

	// 1. Creation: 2N calls in parallel, kinds interleaved.
	err := phaseCPU("create", func() error {
		created := make([][]time.Time, len(kinds))
		for i := range kinds {
			created[i] = make([]time.Time, n)
		}
		start := time.Now()
		if err := parallel(ctx, 2*n, func(ctx context.Context, j int) error {
			k, i := j%len(kinds), j/len(kinds)
			if err := kinds[k].create(ctx, i); err != nil {
				return fmt.Errorf("creating %s %s: %w", kinds[k].name, benchName(i), err)
			}
			created[k][i] = time.Now()
			return nil
		}); err != nil {
			return err
		}
		run.createCalls = time.Since(start)
		fmt.Fprintf(os.Stderr, "bench: reflection: N=%d: %d objects created locally in %s (%.0f/s)\n",
			n, 2*n, ms(run.createCalls), float64(2*n)/run.createCalls.Seconds())
		for k, objs := range kinds {
			if err := objs.copies.wait(ctx, func(c *copies) bool { return len(c.present) >= n }); err != nil {
				return fmt.Errorf("%s: waiting for the copies: %w (%d of %d reflected)", objs.name, err, objs.copies.count(), n)
			}
			r := run.kinds[objs.name]
			objs.copies.mu.Lock()
			for i := range n {
				seen := objs.copies.first[benchName(i)]
				r.reflected = max(r.reflected, seen.Sub(start))
				r.lag = append(r.lag, max(0, seen.Sub(created[k][i])))
			}
			objs.copies.mu.Unlock()
			fmt.Fprintf(os.Stderr, "bench: reflection: N=%d: all %s reflected %s after the first create call\n", n, objs.name, ms(r.reflected))
		}
		return nil
	})
	if err != nil {
		return run, err
	}

	// 2. Updates: each object once at each steady rate, then once more all
	// at once; one kind after the other.
	err = phaseCPU("update", func() error {
		for _, rate := range append(slices.Clone(rates), 0) {
			for _, objs := range kinds {
				round := updateRound{rate: rate}
				seq := func(i int) string { return fmt.Sprintf("r%g-%05d", rate, i) }
				returned := make([]time.Time, n)
				do := func(ctx context.Context, i int) error {
					if err := objs.update(ctx, i, seq(i)); err != nil {
						return fmt.Errorf("updating %s %s: %w", objs.name, benchName(i), err)
					}
					returned[i] = time.Now()
					return nil
				}
				start := time.Now()
				var err error
				if rate == 0 {
					err = parallel(ctx, n, do)
				} else {
					err = paced(ctx, n, rate, do)
				}
				if err != nil {
					return err
				}
				calls := time.Since(start)
				if err := objs.copies.wait(ctx, func(c *copies) bool {
					for i := range n {
						if _, ok := c.seen[valueKey(benchName(i), seq(i))]; !ok {
							return false
						}
					}
					return true
				}); err != nil {
					return fmt.Errorf("%s, %s updates: waiting for the copies: %w", round, objs.name, err)
				}
				round.lat = make([]time.Duration, n)
				objs.copies.mu.Lock()
				for i := range n {
					d := objs.copies.seen[valueKey(benchName(i), seq(i))].Sub(returned[i])
					if d < 0 {
						round.early, d = round.early+1, 0
					}
					round.lat[i] = d
				}
				objs.copies.mu.Unlock()
				r := run.kinds[objs.name]
				r.updates = append(r.updates, round)
				fmt.Fprintf(os.Stderr, "bench: reflection: N=%d: %s, %s updates: calls took %s, latency %s\n",
					n, round, objs.name, ms(calls), percentiles(round.lat))
			}
		}
		return nil
	})
	if err != nil {
		return run, err
	}

	// 3. Deletion: 2N calls in parallel, until no copy is left. (The
	// managers' RSS and CPU time are read across all phases.)
	err = phaseCPU("delete", func() error {
		start := time.Now()
		if err := parallel(ctx, 2*n, func(ctx context.Context, j int) error {
			k, i := j%len(kinds), j/len(kinds)
			if err := kinds[k].delete(ctx, i); err != nil {
				return fmt.Errorf("deleting %s %s: %w", kinds[k].name, benchName(i), err)
			}
			return nil
		}); err != nil {
			return err
		}
		run.deleteCalls = time.Since(start)
		for _, objs := range kinds {
			if err := objs.copies.wait(ctx, func(c *copies) bool { return len(c.present) == 0 }); err != nil {
				return fmt.Errorf("%s: waiting for the copies to go: %w (%d left)", objs.name, err, objs.copies.count())
			}
			r := run.kinds[objs.name]
			objs.copies.mu.Lock()
			for i := range n {
				r.deleted = max(r.deleted, objs.copies.gone[benchName(i)].Sub(start))
			}
			objs.copies.mu.Unlock()
		}
		fmt.Fprintf(os.Stderr, "bench: reflection: N=%d: %d objects deleted locally in %s, all copies gone after %s / %s\n", n, 2*n,
			ms(run.deleteCalls), ms(run.kinds[kindConfigMaps].deleted), ms(run.kinds[kindServices].deleted))
		return nil
	})
	stopSampling()
	stopSampling = nil
	run.rssFinal = usage(managers, func(u proc.Usage) int64 { return u.RSS })
	return run, err
}

// copies follows the copies of one kind in the twin namespace.
type copies struct {
	mu      sync.Mutex
	value   func(metav1.Object) string
	present map[string]bool
	first   map[string]time.Time // name → copy first seen
	gone    map[string]time.Time // name → copy last seen deleted
	seen    map[string]time.Time // valueKey → first seen with that value
	changed chan struct{}
}

func newCopies(value func(metav1.Object) string) *copies {
	return &copies{value: value, present: map[string]bool{}, first: map[string]time.Time{},
		gone: map[string]time.Time{}, seen: map[string]time.Time{}, changed: make(chan struct{}, 1)}
}

func valueKey(name, value string) string { return name + "\x00" + value }

func (c *copies) observe(obj any, deleted bool) {
	now := time.Now()
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	o, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	c.mu.Lock()
	name := o.GetName()
	if deleted {
		delete(c.present, name)
		c.gone[name] = now
	} else {
		c.present[name] = true
		if _, ok := c.first[name]; !ok {
			c.first[name] = now
		}
		if k := valueKey(name, c.value(o)); c.seen[k].IsZero() {
			c.seen[k] = now
		}
	}
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

func (c *copies) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { c.observe(o, false) },
		UpdateFunc: func(_, o any) { c.observe(o, false) },
		DeleteFunc: func(o any) { c.observe(o, true) },
	}
}

func (c *copies) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.present)
}

// wait waits until done holds, for at most reflectionWait.
func (c *copies) wait(ctx context.Context, done func(*copies) bool) error {
	deadline := time.After(reflectionWait)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		c.mu.Lock()
		ok := done(c)
		c.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-c.changed:
		case <-tick.C:
		case <-deadline:
			return fmt.Errorf("timed out after %s", reflectionWait)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// parallel calls do for 0..n-1 with reflectionWorkers calls in flight; the
// first error stops it.
func parallel(ctx context.Context, n int, do func(context.Context, int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, reflectionWorkers) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := do(ctx, i); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}

// paced starts do for 0..n-1 at rate calls per second, each in its own
// goroutine so that a slow call does not hold the pace back.
func paced(ctx context.Context, n int, rate float64, do func(context.Context, int) error) error {
	interval := time.Duration(float64(time.Second) / rate)
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			time.Sleep(d)
		}
		wg.Go(func() {
			if err := do(ctx, i); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return first
}

// cpuOf reads each process's CPU time so far, by name.
func cpuOf(pids map[string]int) map[string]time.Duration {
	out := map[string]time.Duration{}
	for name, pid := range pids {
		if u, err := proc.UsageOf(pid); err == nil {
			out[name] = u.CPU
		}
	}
	return out
}

func usage(pids map[string]int, f func(proc.Usage) int64) map[string]int64 {
	out := map[string]int64{}
	for name, pid := range pids {
		if u, err := proc.UsageOf(pid); err == nil {
			out[name] = f(u)
		}
	}
	return out
}

// errorLines counts the lines of a log that mention an error.
func errorLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	count := 0
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(strings.ToLower(line), "error") {
			count++
		}
	}
	return count
}

// quantile is the q-quantile of sorted durations (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func percentiles(d []time.Duration) string {
	s := slices.Clone(d)
	slices.Sort(s)
	return fmt.Sprintf("p50 %s, p90 %s, p99 %s, max %s", ms(quantile(s, 0.5)), ms(quantile(s, 0.9)), ms(quantile(s, 0.99)), ms(quantile(s, 1)))
}

func printReflection(runs []reflectionRun) {
	w := tabwriter.NewWriter(tables, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tables, "\nReflection: N ConfigMaps and N Services in a namespace offloaded with podOffloadingStrategy Local → copies in the provider's twin namespace")
	fmt.Fprintln(w, "N\tkind\tcreated locally (both kinds)\tcreate rate\tall reflected\tcopy lag p50\tp99\tdeleted → all copies gone\t")
	for _, r := range runs {
		for _, k := range []string{kindConfigMaps, kindServices} {
			kr := r.kinds[k]
			lag := slices.Clone(kr.lag)
			slices.Sort(lag)
			fmt.Fprintf(w, "%d\t%s\t%s\t%.0f/s\t%s\t%s\t%s\t%s\t\n", r.n, k, ms(r.createCalls),
				float64(2*r.n)/r.createCalls.Seconds(), ms(kr.reflected), ms(quantile(lag, 0.5)), ms(quantile(lag, 0.99)), ms(kr.deleted))
			for _, f := range []struct {
				measure string
				d       time.Duration
			}{{"created → all reflected", kr.reflected}, {"copy lag p50", quantile(lag, 0.5)}, {"copy lag p99", quantile(lag, 0.99)}, {"deleted → all copies gone", kr.deleted}} {
				record(measurement{Suite: "reflection", Measure: k + ": " + f.measure, N: r.n, Unit: "s", Value: seconds(f.d)})
			}
		}
	}
	w.Flush()

	fmt.Fprintln(tables, "\nReflection latency: local Update returned → remote copy seen with the new value (watch on the twin namespace)")
	fmt.Fprintln(w, "N\tkind\tupdates\tp50\tp90\tp99\tmax\tseen before the call returned\t")
	for _, r := range runs {
		for _, k := range []string{kindConfigMaps, kindServices} {
			kr := r.kinds[k]
			for _, m := range kr.updates {
				s := slices.Clone(m.lat)
				slices.Sort(s)
				fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t\n", r.n, k, m,
					ms(quantile(s, 0.5)), ms(quantile(s, 0.9)), ms(quantile(s, 0.99)), ms(quantile(s, 1)), m.early)
				for _, q := range []float64{0.5, 0.99} {
					record(measurement{Suite: "reflection", Measure: fmt.Sprintf("%s: update latency p%.0f, %s", k, 100*q, m), N: r.n, Unit: "s", Value: seconds(quantile(s, q))})
				}
			}
		}
	}
	w.Flush()

	fmt.Fprintln(tables, "\nReflection resources: controller manager processes (the consumer's runs the virtual kubelet); CPU per object = all phases / 2N objects")
	fmt.Fprintln(w, "N\tmanager\tRSS before\tpeak RSS\tfinal RSS\tCPU create\tCPU updates\tCPU delete\tCPU per object\tAPI servers CPU\t")
	for _, r := range runs {
		for _, m := range []string{"consumer", "provider"} {
			var total time.Duration
			for _, p := range reflectionPhases {
				total += r.cpu[p][m]
			}
			api := "–"
			if m == "consumer" {
				var a time.Duration
				for _, p := range reflectionPhases {
					a += r.apiCPU[p]
				}
				api = fmt.Sprintf("%.1f s (both)", a.Seconds())
			}
			fmt.Fprintf(w, "%d\t%s\t%d MB\t%d MB\t%d MB\t%.2f s\t%.2f s\t%.2f s\t%.1f ms\t%s\t\n", r.n, m,
				r.rssBefore[m]>>20, r.rssPeak[m].RSS>>20, r.rssFinal[m]>>20,
				r.cpu["create"][m].Seconds(), r.cpu["update"][m].Seconds(), r.cpu["delete"][m].Seconds(),
				float64(total.Milliseconds())/float64(2*r.n), api)
			record(measurement{Suite: "reflection", Measure: "peak RSS, " + m + " manager", N: r.n, Unit: "MB", Value: megabytes(r.rssPeak[m].RSS)})
			record(measurement{Suite: "reflection", Measure: "CPU per object, " + m + " manager", N: r.n, Unit: "ms", Value: number(float64(total.Milliseconds()) / float64(2*r.n))})
		}
	}
	w.Flush()
}

// getUpdater is what updateFresh needs of a typed client.
type getUpdater[P any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (P, error)
	Update(ctx context.Context, obj P, opts metav1.UpdateOptions) (P, error)
}

// updateFresh updates *cur with change applied to a copy of it, reading it
// again after a conflict, and keeps the stored object in *cur.
func updateFresh[P client.Object](ctx context.Context, api getUpdater[P], cur *P, change func(P)) error {
	for {
		next := (*cur).DeepCopyObject().(P)
		change(next)
		updated, err := api.Update(ctx, next, metav1.UpdateOptions{})
		if apierrors.IsConflict(err) {
			if *cur, err = api.Get(ctx, next.GetName(), metav1.GetOptions{}); err != nil {
				return err
			}
			continue
		}
		if err == nil {
			*cur = updated
		}
		return err
	}
}
