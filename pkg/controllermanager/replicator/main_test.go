package replicator

import (
	"context"
	"fmt"
	"os"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	"github.com/liqo-go/liqo/deploy/crds"
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
		err := crds.Install(context.Background(), cluster.Config)
		if err == nil {
			cl, err = client.New(cluster.Config, client.Options{Scheme: apis.NewScheme()})
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "setting up the cluster:", err)
			tb.Stop()
			os.Exit(1)
		}
	}, testbed.ClusterSpec{Name: "replicator", Nodes: []testbed.NodePool{{Count: 0}}})
}
