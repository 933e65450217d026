package shadowendpointslice

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/deploy/charts/liqo/crds"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/testbed"
)

var (
	// cl is an uncached client for the tests' own reads and writes, so that
	// what they check is the API server's state, not the manager's cache.
	cl client.Client
	// provider is the cluster, for kubectl.
	provider *testbed.Cluster
)

// TestMain starts one provider cluster and, against it, a manager running
// the Reconciler with the EndpointSlice cache filtered as in production.
// The cluster's own kube-controller-manager runs too: its garbage collector
// and EndpointSlice controller are part of what is tested.
func TestMain(m *testing.M) {
	testbed.Main(m, func(tb *testbed.Testbed) {
		provider = tb.Cluster("provider")
		if err := startManager(provider.Config); err != nil {
			fmt.Fprintln(os.Stderr, "starting the manager:", err)
			tb.Stop()
			os.Exit(1)
		}
		testbed.Must(tb, configureConsumers(consumer, "naples"))
	}, testbed.ClusterSpec{Name: "provider", Nodes: []testbed.NodePool{{Count: 1}}})
}

func startManager(cfg *rest.Config) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := crds.Install(ctx, cfg); err != nil {
		return err
	}
	var err error
	if cl, err = client.New(cfg, client.Options{Scheme: apis.NewScheme()}); err != nil {
		return err
	}
	mgr, err := testbed.NewManager(cfg, cache.Options{ByObject: map[client.Object]cache.ByObject{&discoveryv1.EndpointSlice{}: EndpointSliceCache()}})
	if err != nil {
		return err
	}
	if err := (&Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return err
	}
	return testbed.StartManager(ctx, mgr)
}

// configureConsumers gives the provider a Configuration of each consumer,
// as the network fabric or liqoctl network init would, keeping its CIDRs
// as they are (configured, not remapped): its slices' addresses in those
// CIDRs reach the provider's EndpointSlices unchanged.
func configureConsumers(consumers ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, id := range consumers {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: consts.TenantNamespace(id)}}
		if err := cl.Create(ctx, ns); err != nil {
			return err
		}
		cidrs := netv1beta1.ClusterConfig{CIDR: netv1beta1.ClusterConfigCIDR{
			Pod: []netv1beta1.CIDR{"10.244.0.0/16"}, External: []netv1beta1.CIDR{"10.70.0.0/16"}}}
		cfg := &netv1beta1.Configuration{ObjectMeta: metav1.ObjectMeta{Name: id, Namespace: ns.Name},
			Spec: netv1beta1.ConfigurationSpec{Remote: cidrs}}
		if err := cl.Create(ctx, cfg); err != nil {
			return err
		}
		cfg.Status = netv1beta1.ConfigurationStatus{Remote: &cidrs, Conditions: []metav1.Condition{{
			Type: netv1beta1.NetworkCIDRsConfiguredCondition, Status: metav1.ConditionTrue, Reason: "CIDRsConfigured", LastTransitionTime: metav1.Now()}}}
		if err := cl.Status().Update(ctx, cfg); err != nil {
			return err
		}
	}
	return nil
}
