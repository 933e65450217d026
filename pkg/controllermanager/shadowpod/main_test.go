package shadowpod

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	"github.com/liqo-go/liqo/deploy/charts/liqo/crds"
	"github.com/liqo-go/liqo/pkg/testbed"
)

var (
	// cl is an uncached client for the tests' own reads and writes, so that
	// what they check is the API server's state, not the manager's cache.
	cl client.Client
	// providerConfig is the provider's admin configuration, which the
	// consumers' clients impersonate from.
	providerConfig *rest.Config
	// writes counts the manager's write requests, per namespace.
	writes = &writeCounter{byNamespace: map[string]map[string]int{}}
)

// TestMain starts one provider cluster and, against it, a manager running
// the Reconciler with the Pod cache filtered as in production.
func TestMain(m *testing.M) {
	testbed.Main(m, func(tb *testbed.Testbed) {
		if err := startManager(tb.Cluster("provider").Config); err != nil {
			fmt.Fprintln(os.Stderr, "starting the manager:", err)
			tb.Stop()
			os.Exit(1)
		}
	}, testbed.ClusterSpec{Name: "provider", Nodes: []testbed.NodePool{{Count: 2, Pods: 250}}})
}

func startManager(cfg *rest.Config) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := crds.Install(ctx, cfg); err != nil {
		return err
	}
	providerConfig = cfg
	var err error
	if cl, err = client.New(cfg, client.Options{Scheme: apis.NewScheme()}); err != nil {
		return err
	}

	mcfg := rest.CopyConfig(cfg)
	mcfg.Wrap(writes.wrap)
	mgr, err := testbed.NewManager(mcfg, cache.Options{ByObject: Caches(nil)})
	if err != nil {
		return err
	}
	if err := (&Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return err
	}
	return testbed.StartManager(ctx, mgr)
}

// writeCounter counts write requests by namespace and "VERB resource[/sub]".
type writeCounter struct {
	mu          sync.Mutex
	byNamespace map[string]map[string]int
}

func (w *writeCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodGet {
			w.count(req.Method, req.URL.Path)
		}
		return rt.RoundTrip(req)
	})
}

func (w *writeCounter) count(method, path string) {
	// .../namespaces/<ns>/<resource>[/<name>[/<subresource>]]
	parts := strings.Split(path, "/")
	for i := 0; i+2 < len(parts); i++ {
		if parts[i] != "namespaces" {
			continue
		}
		ns, what := parts[i+1], parts[i+2]
		if i+4 < len(parts) {
			what += "/" + parts[i+4]
		}
		w.mu.Lock()
		if w.byNamespace[ns] == nil {
			w.byNamespace[ns] = map[string]int{}
		}
		w.byNamespace[ns][method+" "+what]++
		w.mu.Unlock()
		return
	}
}

// in returns a copy of the counts of one namespace.
func (w *writeCounter) in(ns string) map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]int{}
	for k, v := range w.byNamespace[ns] {
		out[k] = v
	}
	return out
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
