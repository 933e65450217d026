package remotes

import (
	"context"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/liqo-go/liqo/apis"
	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/testbed"
)

// provider is a testbed cluster standing for a provider.
var provider *testbed.Cluster

func TestMain(m *testing.M) {
	testbed.Main(m, func(tb *testbed.Testbed) { provider = tb.Clusters[0] }, testbed.ClusterSpec{Name: "milan", Nodes: []testbed.NodePool{{Count: 0}}})
}

// TestForgetOnUnpeer: once a provider's Identity is gone, asking for its
// client fails and drops its entry, stopping its watches (they leaked for
// every unpeered provider before).
func TestForgetOnUnpeer(t *testing.T) {
	ns := consts.TenantNamespace(provider.Name)
	// The provider is a real API server: the watches need its discovery.
	data, err := os.ReadFile(provider.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	id := &authv1beta1.Identity{
		ObjectMeta: metav1.ObjectMeta{Name: consts.IdentityName(provider.Name), Namespace: ns},
		Spec:       authv1beta1.IdentitySpec{Namespace: ptr.To("liqo-tenant-rome")},
		Status:     authv1beta1.IdentityStatus{KubeconfigSecretRef: &corev1.LocalObjectReference{Name: "kc"}},
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kc", Namespace: ns}, Data: map[string][]byte{consts.KubeconfigKey: data}}
	reader := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(id, secret).WithStatusSubresource(id).Build()

	pool := NewPool(apis.NewScheme(), reader, func(string, client.Object) types.NamespacedName { return types.NamespacedName{} },
		&corev1.ConfigMap{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = pool.Start(ctx) }()
	for !pool.started() {
		time.Sleep(10 * time.Millisecond)
	}
	if _, remoteNS, err := pool.Client(ctx, provider.Name); err != nil || remoteNS != "liqo-tenant-rome" {
		t.Fatalf("client for %s: namespace %q, %v", provider.Name, remoteNS, err)
	}
	if n := pool.size(); n != 1 {
		t.Fatalf("%d entries after the first client, want 1", n)
	}
	if err := reader.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, _, err := pool.Client(ctx, provider.Name); err == nil {
		t.Fatal("a client for a provider without Identity")
	}
	if n := pool.size(); n != 0 {
		t.Errorf("%d entries once the Identity is gone, want 0: its watches still run", n)
	}
}

func (p *Pool) started() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ctx != nil
}

func (p *Pool) size() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.entries)
}
