package replicator

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/testbed"
)

// cluster plays both sides: the consumer's objects and Identity are in its
// tenant namespace for provider "milan", the replicas in the consumer's
// tenant namespace "liqo-tenant-rome", reached through the cluster's own
// kubeconfig.
var (
	cluster *testbed.Cluster
	cl      client.Client
)

func TestMain(m *testing.M) {
	testbed.Main(m, func(tb *testbed.Testbed) {
		cluster = tb.Clusters[0]
		var err error
		cl, err = cluster.WithCRDs(context.Background())
		testbed.Must(tb, err)
	}, testbed.ClusterSpec{Name: "replicator", Nodes: []testbed.NodePool{{Count: 0}}})
}
