package virtualkubelet

import (
	"testing"

	"github.com/go-logr/logr"

	"github.com/liqo-go/liqo/pkg/testbed"
)

// tb holds the two clusters every testbed test shares: "local", where the
// virtual nodes are registered, and "remote", whose API server they probe.
var tb *testbed.Testbed

func TestMain(m *testing.M) {
	testbed.Main(m, func(t *testbed.Testbed) { tb = t },
		testbed.ClusterSpec{Name: "local", Nodes: []testbed.NodePool{{Count: 1}}},
		testbed.ClusterSpec{Name: "remote", Nodes: []testbed.NodePool{{Count: 1}}},
	)
}

func discardLogger() logr.Logger { return logr.Discard() }
