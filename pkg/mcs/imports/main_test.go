package imports

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/mcs/clusterset"
	"github.com/liqo-go/liqo/pkg/mcs/export"
	"github.com/liqo-go/liqo/pkg/mcs/publish"
	"github.com/liqo-go/liqo/pkg/remotecluster"
	"github.com/liqo-go/liqo/pkg/testbed"
)

// The clusterset of the tests: rome, the consumer, is peered with milan,
// the provider. Both have the testbed's pod CIDR, 10.244.0.0/16, so each
// reaches the other's pods at 10.71.0.0/16 (remapped).
var (
	rome, milan *testbed.Cluster
	// Admin clients of each cluster.
	romeCl, milanCl client.Client
)

func TestMain(m *testing.M) {
	testbed.Main(m, func(tb *testbed.Testbed) {
		rome, milan = tb.Cluster("rome"), tb.Cluster("milan")
		testbed.Must(tb, setup())
	}, testbed.ClusterSpec{Name: "rome", Nodes: []testbed.NodePool{{Count: 0}}},
		testbed.ClusterSpec{Name: "milan", Nodes: []testbed.NodePool{{Count: 0}}})
}

func setup() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var err error
	if romeCl, err = rome.WithCRDs(ctx); err != nil {
		return err
	}
	if milanCl, err = milan.WithCRDs(ctx); err != nil {
		return err
	}
	if err := peer(ctx); err != nil {
		return fmt.Errorf("peering: %w", err)
	}
	for _, c := range []*testbed.Cluster{rome, milan} {
		if err := startManager(ctx, c); err != nil {
			return fmt.Errorf("the manager of %s: %w", c.Name, err)
		}
	}
	return nil
}

// peer makes what a peering leaves for the MCS controllers: in rome, the
// Identity for milan (milan's admin kubeconfig stands for the consumer's
// credentials) and the Configuration of milan's networks; in milan, the
// Tenant of rome and the Configuration of rome's.
func peer(ctx context.Context) error {
	kubeconfig, err := os.ReadFile(milan.Kubeconfig)
	if err != nil {
		return err
	}
	romeNS, milanNS := consts.TenantNamespace("milan"), consts.TenantNamespace("rome")
	objs := []struct {
		c client.Client
		o client.Object
	}{
		{romeCl, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: romeNS}}},
		{romeCl, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kubeconfig", Namespace: romeNS}, Data: map[string][]byte{consts.KubeconfigKey: kubeconfig}}},
		{romeCl, &authv1beta1.Identity{ObjectMeta: metav1.ObjectMeta{Name: consts.IdentityName("milan"), Namespace: romeNS},
			Spec: authv1beta1.IdentitySpec{Namespace: ptr.To(milanNS)}}},
		{milanCl, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: milanNS}}},
		{milanCl, &authv1beta1.Tenant{ObjectMeta: metav1.ObjectMeta{Name: "rome", Namespace: milanNS},
			Spec: authv1beta1.TenantSpec{ClusterID: corev1beta1.ClusterID("rome")}}},
	}
	for _, o := range objs {
		if err := o.c.Create(ctx, o.o); err != nil {
			return err
		}
	}
	id := &authv1beta1.Identity{}
	if err := romeCl.Get(ctx, client.ObjectKey{Namespace: romeNS, Name: consts.IdentityName("milan")}, id); err != nil {
		return err
	}
	id.Status.KubeconfigSecretRef = &corev1.LocalObjectReference{Name: "kubeconfig"}
	if err := romeCl.Status().Update(ctx, id); err != nil {
		return err
	}
	for _, c := range []struct {
		cl       client.Client
		ns, peer string
	}{{romeCl, romeNS, "milan"}, {milanCl, milanNS, "rome"}} {
		if err := configure(ctx, c.cl, c.ns, c.peer); err != nil {
			return err
		}
	}
	return nil
}

// configure writes the configured Configuration of peer: its pod CIDR
// 10.244.0.0/16 reached at 10.71.0.0/16, its external CIDR 10.70.0.0/16 at
// 10.72.0.0/16.
func configure(ctx context.Context, c client.Client, ns, peer string) error {
	cidrs := func(pod, ext string) *netv1beta1.ClusterConfig {
		return &netv1beta1.ClusterConfig{CIDR: netv1beta1.ClusterConfigCIDR{Pod: []netv1beta1.CIDR{netv1beta1.CIDR(pod)}, External: []netv1beta1.CIDR{netv1beta1.CIDR(ext)}}}
	}
	cfg := &netv1beta1.Configuration{ObjectMeta: metav1.ObjectMeta{Name: peer, Namespace: ns},
		Spec: netv1beta1.ConfigurationSpec{Remote: *cidrs("10.244.0.0/16", "10.70.0.0/16")}}
	if err := c.Create(ctx, cfg); err != nil {
		return err
	}
	cfg.Status.Remote = cidrs("10.71.0.0/16", "10.72.0.0/16")
	cfg.Status.Conditions = []metav1.Condition{{Type: netv1beta1.NetworkCIDRsConfiguredCondition, Status: metav1.ConditionTrue,
		Reason: netv1beta1.ConfigurationReasonConfigured, LastTransitionTime: metav1.Now()}}
	return c.Status().Update(ctx, cfg)
}

// startManager runs, against c, the controllers of Multi-Cluster Services
// as the controller manager does.
func startManager(ctx context.Context, c *testbed.Cluster) error {
	mgr, err := testbed.NewManager(c.Config, cache.Options{})
	if err != nil {
		return err
	}
	remotes := remotecluster.NewRegistry(mgr.GetAPIReader(), remotecluster.Options{Scheme: mgr.GetScheme()})
	store := clusterset.NewStore()
	for _, setup := range []func() error{
		func() error { return (&export.Reconciler{ClusterID: c.Name, Clusterset: store}).SetupWithManager(mgr) },
		func() error {
			return (&clusterset.Reader{Client: mgr.GetClient(), ClusterID: c.Name, Remotes: remotes, Store: store}).SetupWithManager(mgr)
		},
		func() error { return (&publish.Reconciler{ClusterID: c.Name, Remotes: remotes}).SetupWithManager(mgr) },
		func() error { return (&Reconciler{ClusterID: c.Name, Store: store}).SetupWithManager(mgr) },
	} {
		if err := setup(); err != nil {
			return err
		}
	}
	return testbed.StartManager(ctx, mgr)
}
