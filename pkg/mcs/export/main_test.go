package export

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/liqo-go/liqo/pkg/mcs/merge"
	"github.com/liqo-go/liqo/pkg/testbed"
)

// The cluster's ID as the Reconciler knows it.
const localID = "rome"

var (
	// cl is an uncached client for the tests' own reads and writes.
	cl      client.Client
	cluster *testbed.Cluster
	// peers stands for the rest of the clusterset: the tests set the
	// exports of other clusters in it.
	peers = &peerExports{exports: map[types.NamespacedName][]merge.Export{}, changed: make(chan event.TypedGenericEvent[client.Object], 16)}
)

// TestMain starts one cluster and, against it, a manager running the
// Reconciler with the CRDs the chart installs.
func TestMain(m *testing.M) {
	testbed.Main(m, func(tb *testbed.Testbed) {
		cluster = tb.Cluster("rome")
		if err := startManager(cluster); err != nil {
			fmt.Fprintln(os.Stderr, "starting the manager:", err)
			tb.Stop()
			os.Exit(1)
		}
	}, testbed.ClusterSpec{Name: "rome", Nodes: []testbed.NodePool{{Count: 0}}})
}

func startManager(c *testbed.Cluster) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var err error
	if cl, err = c.WithCRDs(ctx); err != nil {
		return err
	}
	mgr, err := testbed.NewManager(c.Config, cache.Options{})
	if err != nil {
		return err
	}
	if err := (&Reconciler{ClusterID: localID, Clusterset: peers}).SetupWithManager(mgr); err != nil {
		return err
	}
	return testbed.StartManager(ctx, mgr)
}

// peerExports is a Clusterset whose exports the tests set.
type peerExports struct {
	mu      sync.Mutex
	exports map[types.NamespacedName][]merge.Export
	changed chan event.TypedGenericEvent[client.Object]
}

var _ Clusterset = (*peerExports)(nil)

func (p *peerExports) Exports(_ context.Context, namespace, name string) ([]merge.Export, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exports[types.NamespacedName{Namespace: namespace, Name: name}], nil
}

// set makes exports the other clusters' exports of namespace/name, and
// says so as a Clusterset does.
func (p *peerExports) set(namespace, name string, exports ...merge.Export) {
	p.mu.Lock()
	p.exports[types.NamespacedName{Namespace: namespace, Name: name}] = exports
	p.mu.Unlock()
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	p.changed <- event.TypedGenericEvent[client.Object]{Object: obj}
}

func (p *peerExports) Changed() <-chan event.TypedGenericEvent[client.Object] { return p.changed }
