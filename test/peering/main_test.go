// Package peering tests liqoctl peer / unpeer / info end to end on three
// testbed clusters, each running our controller manager in-process.
package peering

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager"
	"github.com/liqo-go/liqo/pkg/liqoctl"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/testbed"
)

var (
	tb          *testbed.Testbed
	kubeconfigs = map[string]string{}
	managers    sync.WaitGroup
)

// The providers differ in policy: milan clamps requests to what it can share,
// naples denies them; naples allows its consumers NodePort Services, milan
// keeps the default (ClusterIP only).
var clusters = []struct {
	name         string
	labels       map[string]string
	policy       controllermanager.SlicePolicy
	serviceTypes []string
}{
	{"rome", map[string]string{"region": "south-europe"}, controllermanager.SliceClamp, nil},
	{"milan", map[string]string{"region": "north-italy", "tier": "gold"}, controllermanager.SliceClamp, nil},
	{"naples", map[string]string{"region": "south-italy"}, controllermanager.SliceDeny, []string{"NodePort"}},
}

func TestMain(m *testing.M) {
	specs := make([]testbed.ClusterSpec, 0, len(clusters))
	for _, c := range clusters {
		specs = append(specs, testbed.ClusterSpec{Name: c.name, Nodes: []testbed.NodePool{{Prefix: "worker", Count: 2, CPU: "8", Memory: "32Gi", Pods: 110}}})
	}
	testbed.Main(m, func(t *testbed.Testbed) {
		tb = t
		ctx, cancel := context.WithCancel(context.Background())
		// The managers stop before the clusters.
		tb.BeforeStop(func() { cancel(); managers.Wait() })
		dir, err := tb.LogDir("liqo-peering-")
		testbed.Must(tb, err)
		for _, c := range clusters {
			cl := tb.Cluster(c.name)
			path := filepath.Join(dir, c.name+".kubeconfig")
			testbed.Must(tb, cl.WriteKubeconfig(path))
			kubeconfigs[c.name] = path
			logPath := filepath.Join(dir, c.name+"-controller-manager.log")
			startManagers[c.name] = func() { startManager(ctx, cl, c.labels, c.policy, c.serviceTypes, logPath) }
			startManagers[c.name]()
		}
		for _, c := range clusters {
			waitManager(c.name)
		}
	}, specs...)
}

// testGrace is how long virtual nodes stay Ready with their provider
// unreachable here: short, so that the outage tests see it end.
const testGrace = 10 * time.Second

// testUnschedulableTimeout is how long an offloaded pod may stay
// unschedulable on its provider here before it fails: short, so that
// TestDrainedProviderNode sees it happen.
const testUnschedulableTimeout = 20 * time.Second

// testTeardownTimeout is how long a consumer's objects may hold a drain or
// an unpeering here before the provider forces them out: short, so that
// TestTeardownPastConsumerFinalizers sees it happen.
const testTeardownTimeout = 15 * time.Second

// testTenantBytes is how many bytes each consumer may keep on a provider
// here: little, so that TestObjectBudgetEndToEnd fills it with a few dozen
// ConfigMaps, and still many times what the other tests keep.
var testTenantBytes = resource.MustParse("24Mi")

// Per cluster, what starts its controller manager, and what stops it and
// waits until it has, for the outage tests.
var startManagers, stopManagers = map[string]func(){}, map[string]func(){}

func startManager(ctx context.Context, cl *testbed.Cluster, labels map[string]string, policy controllermanager.SlicePolicy, serviceTypes []string, logPath string) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	stopManagers[cl.Name] = func() { cancel(); <-done }
	o := controllermanager.DefaultOptions()
	o.ClusterID, o.ClusterLabels, o.SlicePolicy = cl.Name, labels, policy
	o.ReflectedPolicy.ServiceTypes = serviceTypes
	o.HealthCheckInterval = time.Second
	o.ProviderUnreachableGrace = testGrace
	o.RemoteUnschedulableTimeout = testUnschedulableTimeout
	o.Teardown.Timeout = testTeardownTimeout
	o.TenantObjects.MaxBytes.Quantity = testTenantBytes
	o.IPAM.PodCIDR = netip.MustParsePrefix("10.244.0.0/16") // every testbed cluster's
	o.Logger = zap.New(zap.WriteTo(f), zap.UseDevMode(true))
	managers.Add(1)
	go func() {
		defer managers.Done()
		defer close(done)
		defer f.Close()
		controllermanager.RunLocal(ctx, cl.Config, o, func(err error) { o.Logger.Error(err, "controller manager stopped; restarting") })
	}()
}

// waitManager waits until the cluster's manager holds its lease, as liqoctl
// checks: at start, and after its API server was stopped long enough for the
// manager to lose the lease and restart.
func waitManager(name string) {
	if err := factory.WaitForComponents(context.Background(), kubeconfigs[name], consts.DefaultNamespace, 2*time.Minute); err != nil {
		panic("controller manager of " + name + " did not start: " + err.Error())
	}
}

// run executes liqoctl in-process and returns its output.
func run(ctx context.Context, args ...string) (string, error) {
	return liqoctl.Execute(ctx, args...)
}
