package webhook

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	"github.com/liqo-go/liqo/deploy/crds"
	"github.com/liqo-go/liqo/pkg/controllermanager/shadowpod"
	"github.com/liqo-go/liqo/pkg/testbed"
)

var (
	cluster *testbed.Cluster
	// cl is an uncached admin client: what the tests check is the API
	// server's state.
	cl client.Client
	// running is the manager serving the webhooks now; the restart test
	// replaces it.
	running *runningManager
)

// registeredURL is the pod webhook's URL in its configuration.
func registeredURL(ctx context.Context) (string, error) {
	var m admissionv1.MutatingWebhookConfiguration
	if err := cl.Get(ctx, client.ObjectKey{Name: MutatingConfigurationName}, &m); err != nil {
		return "", err
	}
	if len(m.Webhooks) == 0 || m.Webhooks[0].ClientConfig.URL == nil {
		return "", nil
	}
	return *m.Webhooks[0].ClientConfig.URL, nil
}

// TestMain starts one cluster and a manager serving the webhooks, with the
// Pod cache limited as in production and no other controller.
func TestMain(m *testing.M) {
	testbed.Main(m, func(tb *testbed.Testbed) {
		cluster = tb.Clusters[0]
		err := crds.Install(context.Background(), cluster.Config)
		if err == nil {
			cl, err = client.New(cluster.Config, client.Options{Scheme: apis.NewScheme()})
		}
		if err == nil {
			running, err = startManager(cluster.Config)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "starting the manager:", err)
			tb.Stop()
			os.Exit(1)
		}
	}, testbed.ClusterSpec{Name: "webhook"})
}

type runningManager struct {
	stop context.CancelFunc
	done chan struct{}
}

// Stop stops the manager and waits until it has.
func (r *runningManager) Stop() {
	r.stop()
	<-r.done
}

func startManager(cfg *rest.Config) (*runningManager, error) {
	mgr, err := testbed.NewManager(cfg, cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: shadowpod.PodCache()}})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	before, _ := registeredURL(ctx)
	if err := Setup(ctx, mgr, Options{Addr: "127.0.0.1:0"}); err != nil {
		cancel()
		return nil, err
	}
	r := &runningManager{stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager stopped:", err)
		}
	}()
	// Registered once the configurations name this manager's server, not
	// the one before it.
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	err = wait.PollUntilContextCancel(wctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		url, err := registeredURL(ctx)
		return err == nil && url != "" && url != before, nil
	})
	if err != nil {
		r.Stop()
		return nil, fmt.Errorf("the webhooks were not registered: %w", err)
	}
	return r, nil
}
