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

	"github.com/liqo-go/liqo/apis"
	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/testbed"
)

// provider is a testbed cluster standing for both sides: the consumer's
// Identity for it lives in it, and its kubeconfig reaches it.
var (
	provider *testbed.Cluster
	cl       client.Client
)

func TestMain(m *testing.M) {
	testbed.Main(m, func(tb *testbed.Testbed) {
		provider = tb.Clusters[0]
		var err error
		cl, err = provider.WithCRDs(context.Background())
		testbed.Must(tb, err)
	}, testbed.ClusterSpec{Name: "milan", Nodes: []testbed.NodePool{{Count: 0}}})
}

// TestForgetOnUnpeer: once a provider's Identity is gone, asking for its
// client fails and drops its entry, and its watches stop (they leaked for
// every unpeered provider before).
func TestForgetOnUnpeer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := consts.TenantNamespace(provider.Name)
	data, err := os.ReadFile(provider.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	if err := cl.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kc", Namespace: ns},
		Data: map[string][]byte{consts.KubeconfigKey: data}}); err != nil {
		t.Fatal(err)
	}
	id := &authv1beta1.Identity{ObjectMeta: metav1.ObjectMeta{Name: consts.IdentityName(provider.Name), Namespace: ns},
		Spec: authv1beta1.IdentitySpec{Namespace: ptr.To("liqo-tenant-rome")}}
	if err := cl.Create(ctx, id); err != nil {
		t.Fatal(err)
	}
	id.Status.KubeconfigSecretRef = &corev1.LocalObjectReference{Name: "kc"}
	if err := cl.Status().Update(ctx, id); err != nil {
		t.Fatal(err)
	}

	pool := NewPool(apis.NewScheme(), cl, func(string, client.Object) types.NamespacedName { return types.NamespacedName{} },
		&corev1.ConfigMap{})
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = pool.Start(pctx) }()
	for !pool.started() {
		time.Sleep(10 * time.Millisecond)
	}
	if _, remoteNS, err := pool.Client(ctx, provider.Name); err != nil || remoteNS != "liqo-tenant-rome" {
		t.Fatalf("client for %s: namespace %q, %v", provider.Name, remoteNS, err)
	}
	if n := pool.Len(); n != 1 {
		t.Fatalf("%d entries after the first client, want 1", n)
	}
	watches := pool.done(provider.Name)

	if err := cl.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, _, err := pool.Client(ctx, provider.Name); err == nil {
		t.Fatal("a client for a provider without Identity")
	}
	if n := pool.Len(); n != 0 {
		t.Errorf("%d entries once the Identity is gone, want 0: its watches still run", n)
	}
	select {
	case <-watches:
	case <-ctx.Done():
		t.Error("the watches on the forgotten provider did not stop")
	}
}

func (p *Pool) started() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ctx != nil
}

// done is closed once the watches on provider have stopped.
func (p *Pool) done(provider string) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.entries[provider].done
}
