package auth

import (
	"context"
	"testing"

	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/testbed"
)

// One cluster plays both sides of the handshake: the consumer's tenant
// namespace for provider P is liqo-tenant-P, the provider's for consumer C
// is liqo-tenant-C, so each test picks IDs that do not collide. Its
// kube-controller-manager signs the certificates the provider approves.
var (
	cluster *testbed.Cluster
	cl      client.Client
	cs      kubernetes.Interface
)

func TestMain(m *testing.M) {
	testbed.Main(m, func(tb *testbed.Testbed) {
		cluster = tb.Clusters[0]
		cs = cluster.Client()
		var err error
		cl, err = cluster.WithCRDs(context.Background())
		testbed.Must(tb, err)
	}, testbed.ClusterSpec{Name: "auth", Nodes: []testbed.NodePool{{Count: 0}}})
}
