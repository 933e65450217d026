package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chromedp/chromedp"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/dashboard"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/browser"
)

// dashboardResult is the time from the page's navigation to its first
// picture with every peer drawn, once per load.
type dashboardResult struct {
	peers int
	loads []time.Duration
}

// renderedJS resolves, at the first animation frame that shows n peering
// edges, to the milliseconds since the navigation started.
const renderedJS = `new Promise(resolve => {
  const check = () => document.querySelectorAll('#edges [data-peering]').length >= %d ? resolve(performance.now()) : requestAnimationFrame(check);
  check();
})`

// benchDashboard writes peers ForeignClusters of providers (healthy, each
// with a ResourceSlice asking for GPUs, a virtual node and the twin of one
// offloaded namespace) into one testbed API server with a cluster identity
// and a live manager Lease, as a consumer of that many providers holds,
// runs the dashboard on it and loads its page in headless Chromium, loads
// times.
func benchDashboard(ctx context.Context, bins *testbed.Binaries, peers, loads int) (*dashboardResult, error) {
	tb, err := testbed.Start(ctx, testbed.Options{Binaries: bins}, testbed.ClusterSpec{Name: "consumer"})
	if err != nil {
		return nil, err
	}
	defer tb.Stop()
	cl := tb.Clusters[0]
	c, err := cl.WithCRDs(ctx)
	if err != nil {
		return nil, err
	}
	if err := writePeers(ctx, c, peers); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "liqo-bench-dashboard-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	kubeconfig := filepath.Join(dir, "consumer.kubeconfig")
	if err := cl.WriteKubeconfig(kubeconfig); err != nil {
		return nil, err
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	srv, err := dashboard.Start(sctx, dashboard.Options{Kubeconfig: kubeconfig, Namespace: consts.DefaultNamespace, Timeout: 15 * time.Second})
	if err != nil {
		return nil, err
	}
	bctx, closeBrowser, err := browser.New(ctx, os.Stderr, 1440, 1000)
	if err != nil {
		return nil, err
	}
	defer closeBrowser()
	r := &dashboardResult{peers: peers}
	for i := range loads + 1 {
		lctx, cancel := context.WithTimeout(bctx, time.Minute)
		err := chromedp.Do(lctx, chromedp.Navigate(srv.URL))
		var ms float64
		if err == nil {
			ms, err = chromedp.Run(lctx, chromedp.Evaluate[float64](fmt.Sprintf(renderedJS, peers), chromedp.EvalAwaitPromise))
		}
		cancel()
		if err != nil {
			return nil, fmt.Errorf("loading the page: %w", err)
		}
		d := time.Duration(ms * float64(time.Millisecond))
		// The first load waits for the clusters' first listing; the
		// figure is the page's, from a server that has its picture.
		if i == 0 {
			fmt.Fprintf(os.Stderr, "bench: dashboard: first load (informers syncing) %s\n", d.Round(time.Millisecond))
			continue
		}
		r.loads = append(r.loads, d)
	}
	return r, nil
}

// writePeers writes what a consumer of n providers holds.
func writePeers(ctx context.Context, c client.Client, n int) error {
	ns := func(name string) error {
		err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
		return client.IgnoreAlreadyExists(err)
	}
	if err := ns(consts.DefaultNamespace); err != nil {
		return err
	}
	now := metav1.NewMicroTime(time.Now())
	for _, obj := range []client.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: consts.ClusterIDConfigMap, Namespace: consts.DefaultNamespace},
			Data: map[string]string{consts.ClusterIDKey: "consumer"}},
		&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: consts.ControllerManagerLease, Namespace: consts.DefaultNamespace},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("bench"), LeaseDurationSeconds: ptr.To[int32](3600), RenewTime: &now}},
	} {
		if err := c.Create(ctx, obj); err != nil {
			return err
		}
	}
	if err := ns("shop"); err != nil {
		return err
	}
	nsof := &offv1beta1.NamespaceOffloading{ObjectMeta: metav1.ObjectMeta{Name: offv1beta1.NamespaceOffloadingName, Namespace: "shop"}}
	if err := c.Create(ctx, nsof); err != nil {
		return err
	}
	nsof.Status = offv1beta1.NamespaceOffloadingStatus{OffloadingPhase: offv1beta1.ReadyOffloadingPhase, RemoteNamespaceName: "shop-consumer",
		RemoteNamespacesConditions: map[string]offv1beta1.RemoteNamespaceConditions{}}
	healthy := func(t corev1beta1.ConditionType) corev1beta1.Module {
		return corev1beta1.Module{Enabled: true, Summary: "Healthy", Conditions: []corev1beta1.Condition{{Type: t, Status: corev1beta1.ReadyStatus}}}
	}
	asked := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"),
		"nvidia.com/gpu": resource.MustParse("1")}
	for i := range n {
		id := fmt.Sprintf("provider-%02d", i+1)
		tenant := consts.TenantNamespace(id)
		if err := ns(tenant); err != nil {
			return err
		}
		fc := &corev1beta1.ForeignCluster{ObjectMeta: metav1.ObjectMeta{Name: id}, Spec: corev1beta1.ForeignClusterSpec{ClusterID: corev1beta1.ClusterID(id)}}
		rs := &authv1beta1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: tenant},
			Spec: authv1beta1.ResourceSliceSpec{ProviderClusterID: ptr.To(corev1beta1.ClusterID(id)), Resources: asked}}
		vn := &offv1beta1.VirtualNode{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: tenant},
			Spec: offv1beta1.VirtualNodeSpec{ClusterID: corev1beta1.ClusterID(id), ResourceQuota: corev1.ResourceQuotaSpec{Hard: asked}}}
		for _, obj := range []client.Object{fc, rs, vn} {
			if err := c.Create(ctx, obj); err != nil {
				return fmt.Errorf("creating %T %s: %w", obj, id, err)
			}
		}
		fc.Status = corev1beta1.ForeignClusterStatus{Role: corev1beta1.ProviderRole,
			TenantNamespace: corev1beta1.TenantNamespaceType{Local: tenant, Remote: consts.TenantNamespace("consumer")},
			Modules: corev1beta1.Modules{Authentication: healthy(corev1beta1.AuthIdentityControlPlaneStatusCondition),
				Offloading: healthy(corev1beta1.OffloadingVirtualNodeStatusCondition)}}
		rs.Status = authv1beta1.ResourceSliceStatus{Resources: asked, Conditions: []authv1beta1.ResourceSliceCondition{
			{Type: authv1beta1.ResourceSliceAuthentication, Status: authv1beta1.ResourceSliceAccepted},
			{Type: authv1beta1.ResourceSliceResources, Status: authv1beta1.ResourceSliceAccepted}}}
		for _, obj := range []client.Object{fc, rs} {
			if err := c.Status().Update(ctx, obj); err != nil {
				return fmt.Errorf("status of %T %s: %w", obj, id, err)
			}
		}
		nsof.Status.RemoteNamespacesConditions[id] = offv1beta1.RemoteNamespaceConditions{
			{Type: offv1beta1.NamespaceReady, Status: corev1.ConditionTrue, Reason: "Created"}}
	}
	return c.Status().Update(ctx, nsof)
}

func printDashboard(r *dashboardResult) {
	sorted := slices.Clone(r.loads)
	slices.Sort(sorted)
	median := sorted[len(sorted)/2]
	fmt.Fprintf(tables, "\nDashboard (one consumer of %d providers, headless Chromium, page load to every peering drawn; %d loads)\n", r.peers, len(r.loads))
	w := tabwriter.NewWriter(tables, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "peers\tmin\tmedian\tmax\t")
	fmt.Fprintf(w, "%d\t%s\t%s\t%s\t\n", r.peers, sorted[0].Round(time.Millisecond), median.Round(time.Millisecond), sorted[len(sorted)-1].Round(time.Millisecond))
	w.Flush()
	record(measurement{Suite: "dashboard", Measure: "first full render", N: r.peers, Unit: "s", Value: seconds(median)})
}
