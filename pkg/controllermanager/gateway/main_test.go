package gateway

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	"github.com/liqo-go/liqo/deploy/charts/liqo/crds"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/testbed"
)

// cl reads and writes the API server directly, so that the tests check its
// state and not the manager's cache.
var cl client.Client

// restCfg reaches the cluster, for components a test runs itself.
var restCfg *rest.Config

// TestMain starts one cluster with a simulated node (kwok runs the gateway
// pods: they get an IP, turn Ready and are labelled active, which is all
// the controllers read)
// and a manager with both gateway reconcilers, caches restricted as in
// production.
func TestMain(m *testing.M) {
	testbed.Main(m, func(tb *testbed.Testbed) {
		if err := start(tb.Cluster("gw").Config); err != nil {
			fmt.Fprintln(os.Stderr, "starting the manager:", err)
			tb.Stop()
			os.Exit(1)
		}
	}, testbed.ClusterSpec{Name: "gw", Nodes: []testbed.NodePool{{Count: 1}}})
}

func start(cfg *rest.Config) error {
	restCfg = cfg
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := crds.Install(ctx, cfg); err != nil {
		return err
	}
	var err error
	if cl, err = client.New(cfg, client.Options{Scheme: apis.NewScheme()}); err != nil {
		return err
	}
	managed := cache.ByObject{Label: labels.SelectorFromSet(labels.Set{consts.ManagedByLabel: consts.ManagedByValue})}
	mgr, err := testbed.NewManager(cfg, cache.Options{ByObject: map[client.Object]cache.ByObject{
		&corev1.Secret{}: managed, &corev1.Pod{}: managed, &rbacv1.RoleBinding{}: managed, &appsv1.Deployment{}: managed,
	}})
	if err != nil {
		return err
	}
	o := Options{Image: "ghcr.io/liqo-go/liqo-gateway:test", PullPolicy: corev1.PullIfNotPresent}
	rec := mgr.GetEventRecorderFor("liqo-gateway")
	if err := NewServerReconciler(mgr.GetClient(), rec, o).SetupWithManager(mgr); err != nil {
		return err
	}
	if err := NewClientReconciler(mgr.GetClient(), rec, o).SetupWithManager(mgr); err != nil {
		return err
	}
	return testbed.StartManager(ctx, mgr)
}
