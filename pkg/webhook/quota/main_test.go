package quota

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/testbed"
)

// cl is an admin client of the one cluster TestUsageOfMatchesAPIServer
// creates real pods in.
var cl client.Client

// TestMain starts one cluster: what UsageOf counts is checked against what
// its API server stores.
func TestMain(m *testing.M) {
	testbed.Main(m, func(tb *testbed.Testbed) {
		var err error
		cl, err = tb.Clusters[0].WithCRDs(context.Background())
		testbed.Must(tb, err)
	}, testbed.ClusterSpec{Name: "quota"})
}
