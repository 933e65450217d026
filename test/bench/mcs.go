package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	"github.com/liqo-go/liqo/apis"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/controllermanager"
	"github.com/liqo-go/liqo/pkg/liqoctl"
	"github.com/liqo-go/liqo/pkg/mcs/imports"
	"github.com/liqo-go/liqo/pkg/proc"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/pkg/testbed/fabricopts"
)

// The mcs suite's clusters: rome consumes milan, with the fabric on. Even
// Services are exported from rome, odd ones from milan, so each cluster
// is the exporting side of half and the importing side of the other half,
// and both directions of the peering carry records.
const (
	mcsConsumer, mcsProvider = "rome", "milan"
	mcsNamespace             = "bench-mcs"
	// mcsDNS is the cluster DNS Service of every testbed cluster,
	// answered by CoreDNS on the real node.
	mcsDNS = "10.96.0.10:53"
	// mcsDNSTTL is the Corefile's ttl and cache: an answer may be served
	// from CoreDNS's cache this long after it was made.
	mcsDNSTTL = testbed.DNSTTL
)

// mcsService is one exported Service of the suite.
type mcsService struct {
	name               string
	exporter, importer string
	headless           bool
	// fresh: its DNS name is first queried after the change only once the
	// importing cluster's EndpointSlice shows it (nothing cached); the
	// others' are polled from the change on, as a client resolving in a
	// loop would, which keeps the old answer in CoreDNS's cache.
	fresh bool
}

// mcsObjectCount is the number of API objects of each kind, by kind.
type mcsObjectCount map[string]int

// mcsResult holds the mcs suite's figures; the durations are one per
// Service of the group the field names.
type mcsResult struct {
	n int
	// export → ServiceImport (with its IPs when ClusterSetIP) in the
	// exporting cluster, in the importing one, in both; and → the
	// importing cluster's EndpointSlice with the Service's endpoint.
	importExporter, importImporter, importAll, sliceImporter []time.Duration
	// scale 1 → 2 replicas → the exporting cluster's own EndpointSlice
	// shows the second endpoint ready (the pod's start).
	podReady []time.Duration
	// that endpoint change → the importing cluster's EndpointSlice shows it
	// (all Services), and → the importing cluster's CoreDNS answers both
	// addresses for <svc>.<ns>.svc.clusterset.local (Headless ones):
	// polled from the change, or first asked once the slice shows it.
	sliceChange, dnsPolled, dnsFresh []time.Duration
	// objects are the objects per exported Service on the exporting and
	// the importing cluster's API server, by group (mcsGroup).
	objects map[string][2]mcsObjectCount
	// groupSize is the Services of each group.
	groupSize map[string]int
	// rss are the managers' RSS once the Services' pods run, before any
	// export, and after the last figure.
	rss map[string][2]int64
}

// mcsGroup names the kind of export: which side of the peering exports,
// and the Service's type.
func mcsGroup(s mcsService) string {
	typ := "ClusterSetIP"
	if s.headless {
		typ = "Headless"
	}
	role := "consumer"
	if s.exporter == mcsProvider {
		role = "provider"
	}
	return typ + ", exported by the " + role
}

// benchMCS runs the mcs suite with n exported Services.
func benchMCS(ctx context.Context, bins *testbed.Binaries, n int) (*mcsResult, error) {
	ctrl.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
	// The managers run as processes of their own, so that /proc tells
	// their RSS apart from this process's clients and watches.
	dir, manager, cleanup, err := managerWorkDir(ctx, "mcs")
	if err != nil {
		return nil, err
	}
	defer cleanup()
	spec := func(name string) testbed.ClusterSpec {
		return testbed.ClusterSpec{Name: name, RealNodes: 1, Nodes: []testbed.NodePool{{Count: 0}}}
	}
	tb, err := testbed.Start(ctx, testbed.Options{Binaries: bins}, spec(mcsConsumer), spec(mcsProvider))
	if err != nil {
		return nil, err
	}
	defer tb.Stop()
	kubeconfigs, pids, stopManagers, err := fabricManagers(ctx, tb, manager, dir)
	defer stopManagers()
	if err != nil {
		return nil, err
	}
	began := time.Now()
	if out, err := liqoctl.Execute(ctx, "peer", "--kubeconfig", kubeconfigs[mcsConsumer], "--remote-kubeconfig", kubeconfigs[mcsProvider],
		"--server-service-type", "NodePort", "--timeout", "5m"); err != nil {
		return nil, fmt.Errorf("peer %s → %s: %w\n%s", mcsConsumer, mcsProvider, err, out)
	}
	fmt.Fprintf(os.Stderr, "bench: mcs: %s peered with %s, fabric connected, in %s\n", mcsConsumer, mcsProvider, ms(time.Since(began)))

	svcs := make([]mcsService, n)
	for i := range svcs {
		s := mcsService{name: fmt.Sprintf("svc-%03d", i), exporter: mcsConsumer, importer: mcsProvider, headless: (i/2)%2 == 1}
		if i%2 == 1 {
			s.exporter, s.importer = mcsProvider, mcsConsumer
		}
		s.fresh = s.headless && (i/4)%2 == 1
		svcs[i] = s
	}
	clients := map[string]client.WithWatch{}
	seen := &mcsFirsts{at: map[string]time.Time{}}
	wctx, stopWatches := context.WithCancel(ctx)
	defer stopWatches()
	for _, c := range tb.Clusters {
		cl, err := client.NewWithWatch(c.Config, client.Options{Scheme: apis.NewScheme()})
		if err != nil {
			return nil, err
		}
		clients[c.Name] = cl
		if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: mcsNamespace}}); err != nil {
			return nil, err
		}
		follow(wctx, cl, &mcsv1beta1.ServiceImportList{}, func(o client.Object, t time.Time) { seen.serviceImport(c.Name, o, t) })
		follow(wctx, cl, &discoveryv1.EndpointSliceList{}, func(o client.Object, t time.Time) { seen.endpointSlice(c.Name, o, t) })
	}

	// The Services and their one-pod Deployments, then every pod ready.
	for _, s := range svcs {
		if err := createBacked(ctx, clients[s.exporter], s); err != nil {
			return nil, err
		}
	}
	if err := seen.await(ctx, 5*time.Minute, "the Services' pods ready", func(yield func(string) bool) {
		for _, s := range svcs {
			if !yield(nativeKey(s.exporter, s.name, 1)) {
				return
			}
		}
	}); err != nil {
		return nil, err
	}
	time.Sleep(settle)
	r := &mcsResult{n: n, rss: map[string][2]int64{}, objects: map[string][2]mcsObjectCount{}, groupSize: map[string]int{}}
	rssBefore := map[string]int64{}
	for name, pid := range pids {
		u, err := proc.UsageOf(pid)
		if err != nil {
			return nil, err
		}
		rssBefore[name] = u.RSS
	}
	before, err := countObjects(ctx, clients, svcs)
	if err != nil {
		return nil, err
	}

	// (a) Every ServiceExport at once, each timed from its own creation.
	exported := make([]time.Time, n)
	for i, s := range svcs {
		exported[i] = time.Now()
		se := &mcsv1beta1.ServiceExport{ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: mcsNamespace}}
		if err := clients[s.exporter].Create(ctx, se); err != nil {
			return nil, err
		}
	}
	if err := seen.await(ctx, 5*time.Minute, "the imports", func(yield func(string) bool) {
		for _, s := range svcs {
			for _, k := range []string{importKey(s.exporter, s.name), importKey(s.importer, s.name), mcsSliceKey(s.importer, s.name, s.exporter, 1)} {
				if !yield(k) {
					return
				}
			}
		}
	}); err != nil {
		return nil, errors.Join(err, mcsDiagnose(ctx, clients, svcs, seen))
	}
	for i, s := range svcs {
		own, _ := seen.get(importKey(s.exporter, s.name))
		other, _ := seen.get(importKey(s.importer, s.name))
		slice, _ := seen.get(mcsSliceKey(s.importer, s.name, s.exporter, 1))
		r.importExporter = append(r.importExporter, own.Sub(exported[i]))
		r.importImporter = append(r.importImporter, other.Sub(exported[i]))
		r.importAll = append(r.importAll, max(own.Sub(exported[i]), other.Sub(exported[i])))
		r.sliceImporter = append(r.sliceImporter, slice.Sub(exported[i]))
	}
	fmt.Fprintf(os.Stderr, "bench: mcs: %d exports imported in both clusters, p99 %s\n", n, ms(percentile(r.importAll, 99)))
	time.Sleep(settle)
	after, err := countObjects(ctx, clients, svcs)
	if err != nil {
		return nil, err
	}
	for _, s := range svcs {
		r.groupSize[mcsGroup(s)]++
	}
	for g, size := range r.groupSize {
		var per [2]mcsObjectCount
		for side := range per {
			per[side] = mcsObjectCount{}
			for kind, v := range after[g][side] {
				if d := v - before[g][side][kind]; d != 0 {
					// Rounded: every Service of a group has the same objects.
					per[side][kind] = (d + size/2) / size
				}
			}
		}
		r.objects[g] = per
	}

	// (b) Every Headless Service answers its one address in the importing
	// cluster's DNS; then nothing is asked for a cache lifetime, so that
	// the fresh group finds nothing cached.
	resolvers := map[string]*net.Resolver{}
	for _, c := range tb.Clusters {
		resolvers[c.Name] = clusterResolver(c)
	}
	for _, s := range svcs {
		if !s.headless {
			continue
		}
		if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			return len(lookupClusterset(ctx, resolvers[s.importer], s.name)) == 1, nil
		}); err != nil {
			return nil, fmt.Errorf("%s.%s.svc.%s in %s: no single address: %w", s.name, mcsNamespace, testbed.ClustersetZone, s.importer, err)
		}
	}
	fmt.Fprintf(os.Stderr, "bench: mcs: every Headless import answered by the importing cluster's DNS; waiting %s for its cache to expire\n", mcsDNSTTL)
	time.Sleep(mcsDNSTTL + time.Second)

	dnsAt := make([]time.Time, n)
	var wg sync.WaitGroup
	dctx, stopDNS := context.WithTimeout(ctx, 5*time.Minute)
	defer stopDNS()
	scaled := make([]time.Time, n)
	for i, s := range svcs {
		scaled[i] = time.Now()
		if s.headless {
			wg.Go(func() {
				if s.fresh {
					if seen.wait(dctx, mcsSliceKey(s.importer, s.name, s.exporter, 2)) != nil {
						return
					}
				}
				poll := 500 * time.Millisecond
				if s.fresh {
					poll = 100 * time.Millisecond
				}
				_ = wait.PollUntilContextCancel(dctx, poll, true, func(ctx context.Context) (bool, error) {
					if len(lookupClusterset(ctx, resolvers[s.importer], s.name)) == 2 {
						dnsAt[i] = time.Now()
						return true, nil
					}
					return false, nil
				})
			})
		}
		patch := client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":2}}`))
		if err := clients[s.exporter].Patch(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: mcsNamespace}}, patch); err != nil {
			stopDNS()
			wg.Wait()
			return nil, err
		}
	}
	awaitErr := seen.await(ctx, 5*time.Minute, "the second endpoints imported", func(yield func(string) bool) {
		for _, s := range svcs {
			if !yield(nativeKey(s.exporter, s.name, 2)) || !yield(mcsSliceKey(s.importer, s.name, s.exporter, 2)) {
				return
			}
		}
	})
	wg.Wait()
	if awaitErr != nil {
		return nil, errors.Join(awaitErr, mcsDiagnose(ctx, clients, svcs, seen))
	}
	for i, s := range svcs {
		changed, _ := seen.get(nativeKey(s.exporter, s.name, 2))
		imported, _ := seen.get(mcsSliceKey(s.importer, s.name, s.exporter, 2))
		r.podReady = append(r.podReady, changed.Sub(scaled[i]))
		r.sliceChange = append(r.sliceChange, imported.Sub(changed))
		if !s.headless {
			continue
		}
		if dnsAt[i].IsZero() {
			return nil, fmt.Errorf("%s.%s.svc.%s in %s: still not both addresses after 5 minutes", s.name, mcsNamespace, testbed.ClustersetZone, s.importer)
		}
		if s.fresh {
			r.dnsFresh = append(r.dnsFresh, dnsAt[i].Sub(changed))
		} else {
			r.dnsPolled = append(r.dnsPolled, dnsAt[i].Sub(changed))
		}
	}
	time.Sleep(settle)
	for name, pid := range pids {
		u, err := proc.UsageOf(pid)
		if err != nil {
			return nil, err
		}
		r.rss[name] = [2]int64{rssBefore[name], u.RSS}
	}
	return r, nil
}

// fabricFlags are the manager flags of the fabric options that
// fabricopts.Enable sets for c (publishing the images in c's registry):
// every flag whose value differs from the default options'.
func fabricFlags(ctx context.Context, c *testbed.Cluster) ([]string, error) {
	def, o := controllermanager.DefaultOptions(), controllermanager.DefaultOptions()
	pushCtx, cancel := context.WithTimeout(ctx, 10*time.Minute) // a cold build compiles both images
	defer cancel()
	if err := fabricopts.Enable(pushCtx, c, &o); err != nil {
		return nil, err
	}
	defFlags, flags := pflag.NewFlagSet("default", pflag.ContinueOnError), pflag.NewFlagSet("fabric", pflag.ContinueOnError)
	def.AddFlags(defFlags)
	o.AddFlags(flags)
	var args []string
	flags.VisitAll(func(f *pflag.Flag) {
		if d := defFlags.Lookup(f.Name); d == nil || d.Value.String() != f.Value.String() {
			args = append(args, "--"+f.Name+"="+f.Value.String())
		}
	})
	return args, nil
}

// createBacked creates s's Service, port 80, and a Deployment of one
// busybox pod on the real node behind it. The pod listens nowhere: an
// endpoint is ready once its pod runs, which is all the imports carry.
func createBacked(ctx context.Context, cl client.Client, s mcsService) error {
	labels := map[string]string{"app": s.name}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: mcsNamespace}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](1),
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			NodeSelector:                  map[string]string{testbed.NodeTypeLabel: testbed.RealNodeType},
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"sleep", "100000"},
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 80}}}},
		}},
	}}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: mcsNamespace}, Spec: corev1.ServiceSpec{
		Selector: labels,
		Ports:    []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}},
	}}
	if s.headless {
		svc.Spec.ClusterIP = corev1.ClusterIPNone
	}
	if err := cl.Create(ctx, svc); err != nil {
		return err
	}
	return cl.Create(ctx, dep)
}

// mcsFirsts records the first time each fact was seen by the watches.
type mcsFirsts struct {
	mu sync.Mutex
	at map[string]time.Time
}

// The facts: the import of svc exists in cluster (with its IPs when
// ClusterSetIP); cluster's import EndpointSlice of svc from source has
// at least k ready endpoints; the exporting cluster's own EndpointSlice
// of svc has at least k.
func importKey(cluster, svc string) string { return cluster + "/import/" + svc }
func mcsSliceKey(cluster, svc, source string, k int) string {
	return fmt.Sprintf("%s/slice/%s/%s/%d", cluster, svc, source, k)
}
func nativeKey(cluster, svc string, k int) string {
	return fmt.Sprintf("%s/native/%s/%d", cluster, svc, k)
}

func (f *mcsFirsts) mark(key string, t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.at[key]; !ok {
		f.at[key] = t
	}
}

func (f *mcsFirsts) get(key string) (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.at[key]
	return t, ok
}

func (f *mcsFirsts) serviceImport(cluster string, o client.Object, t time.Time) {
	si, ok := o.(*mcsv1beta1.ServiceImport)
	if ok && (si.Spec.Type == mcsv1beta1.Headless || len(si.Spec.IPs) > 0) {
		f.mark(importKey(cluster, si.Name), t)
	}
}

func (f *mcsFirsts) endpointSlice(cluster string, o client.Object, t time.Time) {
	es, ok := o.(*discoveryv1.EndpointSlice)
	if !ok {
		return
	}
	ready := 0
	for _, ep := range es.Endpoints {
		if ep.Conditions.Ready == nil || *ep.Conditions.Ready {
			ready++
		}
	}
	key := func(k int) string { return nativeKey(cluster, es.Labels[discoveryv1.LabelServiceName], k) }
	if svc := es.Labels[mcsv1beta1.LabelServiceName]; svc != "" {
		key = func(k int) string { return mcsSliceKey(cluster, svc, es.Labels[mcsv1beta1.LabelSourceCluster], k) }
	} else if es.Labels[discoveryv1.LabelServiceName] == "" {
		return
	}
	for k := 1; k <= ready; k++ {
		f.mark(key(k), t)
	}
}

// wait returns once key is seen.
func (f *mcsFirsts) wait(ctx context.Context, key string) error {
	return wait.PollUntilContextCancel(ctx, 20*time.Millisecond, true, func(context.Context) (bool, error) {
		_, ok := f.get(key)
		return ok, nil
	})
}

// await returns once every key of keys is seen, or says how many are
// missing after timeout.
func (f *mcsFirsts) await(ctx context.Context, timeout time.Duration, what string, keys func(func(string) bool)) error {
	var missing []string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		missing = missing[:0]
		keys(func(k string) bool {
			if _, ok := f.get(k); !ok {
				missing = append(missing, k)
			}
			return true
		})
		return len(missing) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("%s: %d facts missing after %s, such as %s", what, len(missing), timeout, strings.Join(missing[:min(5, len(missing))], ", "))
	}
	return nil
}

// follow watches the objects of list's kind in the suite's namespace and
// calls seen with each added or changed one, from a goroutine, until ctx
// ends. A watch that ends is opened again: with no resource version it
// starts with every existing object, so nothing is missed, only seen
// twice.
func follow(ctx context.Context, cl client.WithWatch, list client.ObjectList, seen func(client.Object, time.Time)) {
	go func() {
		for ctx.Err() == nil {
			w, err := cl.Watch(ctx, list.DeepCopyObject().(client.ObjectList), client.InNamespace(mcsNamespace))
			if err != nil {
				time.Sleep(200 * time.Millisecond)
				continue
			}
			for ev := range w.ResultChan() {
				if o, ok := ev.Object.(client.Object); ok && (ev.Type == watch.Added || ev.Type == watch.Modified) {
					seen(o, time.Now())
				}
			}
			w.Stop()
		}
	}()
}

// clusterResolver asks c's cluster DNS from inside its real node's network
// namespace, where the kube-dns Service address is routed: the root
// namespace has no address of the testbed's.
func clusterResolver(c *testbed.Cluster) *net.Resolver {
	node := c.RealNodeNames()[0]
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return c.DialInNode(ctx, node, network, mcsDNS)
	}}
}

// lookupClusterset is the IPv4 addresses r answers for svc's clusterset
// name (none on any error).
func lookupClusterset(ctx context.Context, r *net.Resolver, svc string) []string {
	qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	addrs, err := r.LookupIP(qctx, "ip4", fmt.Sprintf("%s.%s.svc.%s.", svc, mcsNamespace, testbed.ClustersetZone))
	if err != nil {
		return nil
	}
	out := make([]string, 0, len(addrs))
	for _, a := range addrs {
		out = append(out, a.String())
	}
	return out
}

// countObjects counts, by group and by side (0: the exporting cluster's API
// server, 1: the importing one's), the Multi-Cluster Services objects of
// the suite's Services: ServiceExports, ServiceImports, the imports'
// Services and EndpointSlices, and the ExportRecords (which live on the
// provider's API server, whichever side exports).
func countObjects(ctx context.Context, clients map[string]client.WithWatch, svcs []mcsService) (map[string][2]mcsObjectCount, error) {
	byName := map[string]mcsService{}
	out := map[string][2]mcsObjectCount{}
	for _, s := range svcs {
		byName[s.name] = s
		out[mcsGroup(s)] = [2]mcsObjectCount{{}, {}}
	}
	add := func(cluster, svc, kind string) {
		s, ok := byName[svc]
		if !ok {
			return
		}
		side := 0
		if cluster != s.exporter {
			side = 1
		}
		out[mcsGroup(s)][side][kind]++
	}
	for cluster, cl := range clients {
		var ses mcsv1beta1.ServiceExportList
		var sis mcsv1beta1.ServiceImportList
		var services corev1.ServiceList
		var eps discoveryv1.EndpointSliceList
		var recs offv1beta1.ExportRecordList
		mcsLabelled := client.HasLabels{mcsv1beta1.LabelServiceName}
		for _, l := range []struct {
			list client.ObjectList
			opts []client.ListOption
		}{
			{&ses, []client.ListOption{client.InNamespace(mcsNamespace)}},
			{&sis, []client.ListOption{client.InNamespace(mcsNamespace)}},
			{&services, []client.ListOption{client.InNamespace(mcsNamespace), mcsLabelled}},
			{&eps, []client.ListOption{client.InNamespace(mcsNamespace), mcsLabelled}},
			{&recs, []client.ListOption{mcsLabelled}},
		} {
			if err := cl.List(ctx, l.list, l.opts...); err != nil {
				return nil, err
			}
		}
		for _, o := range ses.Items {
			add(cluster, o.Name, "ServiceExport")
		}
		for _, o := range sis.Items {
			add(cluster, o.Name, "ServiceImport")
		}
		for _, o := range services.Items {
			add(cluster, o.Labels[mcsv1beta1.LabelServiceName], "Service")
		}
		for _, o := range eps.Items {
			if o.Labels[discoveryv1.LabelManagedBy] == imports.ManagedBy {
				add(cluster, o.Labels[mcsv1beta1.LabelServiceName], "EndpointSlice")
			}
		}
		for _, o := range recs.Items {
			add(cluster, o.Labels[mcsv1beta1.LabelServiceName], "ExportRecord")
		}
	}
	return out, nil
}

// mcsDiagnose describes, for the first Service a wait gave up on, what
// each cluster holds of it: the export's conditions, the import, the
// import's EndpointSlices and the records.
func mcsDiagnose(ctx context.Context, clients map[string]client.WithWatch, svcs []mcsService, seen *mcsFirsts) error {
	for _, s := range svcs {
		if _, ok := seen.get(mcsSliceKey(s.importer, s.name, s.exporter, 1)); ok {
			if _, ok := seen.get(mcsSliceKey(s.importer, s.name, s.exporter, 2)); ok {
				continue
			}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s (exported by %s):", s.name, s.exporter)
		var se mcsv1beta1.ServiceExport
		if err := clients[s.exporter].Get(ctx, client.ObjectKey{Namespace: mcsNamespace, Name: s.name}, &se); err == nil {
			for _, c := range se.Status.Conditions {
				fmt.Fprintf(&b, " export %s=%s (%s: %s);", c.Type, c.Status, c.Reason, c.Message)
			}
		}
		for cluster, cl := range clients {
			var si mcsv1beta1.ServiceImport
			err := cl.Get(ctx, client.ObjectKey{Namespace: mcsNamespace, Name: s.name}, &si)
			fmt.Fprintf(&b, " %s: import %v (ips %v, clusters %v);", cluster, err == nil, si.Spec.IPs, si.Status.Clusters)
			var eps discoveryv1.EndpointSliceList
			if err := cl.List(ctx, &eps, client.InNamespace(mcsNamespace), client.MatchingLabels{mcsv1beta1.LabelServiceName: s.name}); err == nil {
				for _, es := range eps.Items {
					fmt.Fprintf(&b, " slice %s with %d endpoints;", es.Name, len(es.Endpoints))
				}
			}
			var recs offv1beta1.ExportRecordList
			if err := cl.List(ctx, &recs, client.MatchingLabels{mcsv1beta1.LabelServiceName: s.name}); err == nil {
				for _, rec := range recs.Items {
					fmt.Fprintf(&b, " record %s/%s, conditions %v;", rec.Namespace, rec.Name, rec.Status.Conditions)
				}
			}
		}
		return errors.New(b.String())
	}
	return nil
}

// tailFile is the end of a log file, for an error message.
func tailFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return string(b[max(0, len(b)-2000):])
}

func printMCS(r *mcsResult) {
	w := tabwriter.NewWriter(tables, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tables, "\nMulti-cluster services: %d Services of one busybox pod each on a real node, every ServiceExport created at once; even ones exported by %s (consumer), odd ones by %s (provider), half of each ClusterSetIP, half Headless; the fabric on\n",
		r.n, mcsConsumer, mcsProvider)
	fmt.Fprintln(w, "measure\tServices\tp50\tp99\tmax\t")
	row := func(measure string, d []time.Duration) {
		if len(d) == 0 {
			return
		}
		p50, p99, top := percentile(d, 50), percentile(d, 99), percentile(d, 100)
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\t\n", measure, len(d), ms(p50), ms(p99), ms(top))
		for _, x := range []struct {
			q string
			v time.Duration
		}{{"p50", p50}, {"p99", p99}, {"max", top}} {
			record(measurement{Suite: "mcs", Measure: measure + ", " + x.q, N: r.n, Unit: "s", Value: seconds(x.v)})
		}
	}
	row("export → ServiceImport (IPs set if ClusterSetIP) in the exporting cluster", r.importExporter)
	row("export → ServiceImport in the importing cluster", r.importImporter)
	row("export → ServiceImport in both clusters", r.importAll)
	row("export → importing cluster's EndpointSlice has the endpoint", r.sliceImporter)
	row("scale 1 → 2 → exporting cluster's own EndpointSlice shows the new pod ready", r.podReady)
	row("endpoint change → importing cluster's EndpointSlice shows it (all; ClusterSetIP: the figure)", r.sliceChange)
	row(fmt.Sprintf("endpoint change → DNS answer, Headless, name asked every 500 ms from the change (CoreDNS cache, %s)", mcsDNSTTL), r.dnsPolled)
	row("endpoint change → DNS answer, Headless, name first asked once the EndpointSlice shows it (nothing cached)", r.dnsFresh)
	w.Flush()
	if len(r.dnsFresh) > 0 {
		// A first query that reaches CoreDNS before its own watch has the
		// change gets the old answer, which the cache then keeps.
		late := 0
		for _, d := range r.dnsFresh {
			if d > mcsDNSTTL {
				late++
			}
		}
		fmt.Fprintf(tables, "  first asked once the slice shows it: %d of %d answered only after a cache lifetime (%s): asked before CoreDNS had the change\n", late, len(r.dnsFresh), mcsDNSTTL)
		record(measurement{Suite: "mcs", Measure: "endpoint change → DNS answer, Headless, first asked once the EndpointSlice shows it: answered after a cache lifetime", N: r.n, Unit: "Services", Value: number(float64(late))})
	}

	fmt.Fprintln(tables, "\nAPI objects per exported Service, beyond its own Service, EndpointSlice, Deployment and pods (ExportRecords live on the provider)")
	groups := make([]string, 0, len(r.objects))
	for g := range r.objects {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	fmt.Fprintln(w, "export\tServices\texporting cluster\timporting cluster\t")
	for _, g := range groups {
		per := r.objects[g]
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\t\n", g, r.groupSize[g], describeCount(per[0]), describeCount(per[1]))
		for side, name := range []string{"exporting cluster", "importing cluster"} {
			record(measurement{Suite: "mcs", Measure: "API objects per exported Service, " + g + ", " + name, N: r.n, Unit: "objects", Value: number(float64(objectTotal(per[side])))})
		}
	}
	w.Flush()

	fmt.Fprintln(tables, "\nController managers' RSS (a process each), the Services' pods running: before the exports, after the last figure")
	fmt.Fprintln(w, "cluster\tbefore\tafter\t")
	for _, name := range []string{mcsConsumer, mcsProvider} {
		rss := r.rss[name]
		fmt.Fprintf(w, "%s\t%s\t%s\t\n", name, mb(rss[0]), mb(rss[1]))
		record(measurement{Suite: "mcs", Measure: "controller manager RSS before the exports, " + name, N: r.n, Unit: "MB", Value: megabytes(rss[0])})
		record(measurement{Suite: "mcs", Measure: "controller manager RSS after, " + name, N: r.n, Unit: "MB", Value: megabytes(rss[1])})
	}
	w.Flush()
}

func objectTotal(c mcsObjectCount) int {
	t := 0
	for _, v := range c {
		t += v
	}
	return t
}

// describeCount is "5: 1 ServiceExport, 1 ServiceImport, ..." in a fixed
// order of kinds.
func describeCount(c mcsObjectCount) string {
	kinds := make([]string, 0, len(c))
	for k := range c {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%d %s", c[k], k))
	}
	return fmt.Sprintf("%d (%s)", objectTotal(c), strings.Join(parts, ", "))
}
