package webhook

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/controllermanager/shadowpod"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/pkg/webhook/podpolicy"
	"github.com/liqo-go/liqo/pkg/webhook/quota"
	"github.com/liqo-go/liqo/pkg/webhook/reflected"
)

var (
	cluster *testbed.Cluster
	// cl is an uncached admin client: what the tests check is the API
	// server's state.
	cl client.Client
	// running is the manager serving the webhooks now; the restart test
	// replaces it.
	running *runningManager
	// clientCAFile holds the cluster's CA, which signs the client
	// certificate the testbed's API server presents to webhooks.
	clientCAFile string
)

// mainOptions are running's: callers must present the API server's client
// certificate, so every test going through the API server shows it does;
// the registration is checked every second, so a test stopping another
// replica sees running take over quickly.
func mainOptions() Options {
	return Options{Addr: "127.0.0.1:0", Serving: ServingOptions{ClientCAFile: clientCAFile,
		ClientNames: []string{testbed.WebhookClientName}, CheckInterval: time.Second},
		Pods: podpolicy.PodPolicy{RuntimeClasses: []string{"nvidia"}, VirtualStorageClass: "liqo"},
		// A provider serving its consumers' Ingresses on its nginx class,
		// with one of nginx's annotations allowed besides the inert ones.
		Reflected: reflected.ReflectedPolicy{VirtualStorageClass: "liqo", IngressClasses: []string{"nginx"},
			Annotations: []string{"nginx.ingress.kubernetes.io/rewrite-target"}},
		Objects: testBudget()}
}

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

// registeredConfigs are the webhook configurations as stored.
func registeredConfigs(ctx context.Context) (*admissionv1.MutatingWebhookConfiguration, *admissionv1.ValidatingWebhookConfiguration, error) {
	m := &admissionv1.MutatingWebhookConfiguration{}
	v := &admissionv1.ValidatingWebhookConfiguration{}
	if err := cl.Get(ctx, client.ObjectKey{Name: MutatingConfigurationName}, m); err != nil {
		return nil, nil, err
	}
	if err := cl.Get(ctx, client.ObjectKey{Name: ValidatingConfigurationName}, v); err != nil {
		return nil, nil, err
	}
	if len(m.Webhooks) == 0 || m.Webhooks[0].ClientConfig.URL == nil || len(v.Webhooks) == 0 {
		return nil, nil, fmt.Errorf("the webhook configurations name no URL")
	}
	return m, v, nil
}

// TestMain starts one cluster and a manager serving the webhooks, with the
// Pod cache limited as in production and no other controller.
func TestMain(m *testing.M) {
	testbed.Main(m, func(tb *testbed.Testbed) {
		cluster = tb.Clusters[0]
		clientCAFile = filepath.Join(cluster.Dir, "webhook-client-ca.crt")
		err := os.WriteFile(clientCAFile, cluster.Config.CAData, 0o600)
		if err == nil {
			cl, err = cluster.WithCRDs(context.Background())
		}
		if err == nil {
			running, err = startManager(cluster.Config, mainOptions())
		}
		testbed.Must(tb, err)
	}, testbed.ClusterSpec{Name: "webhook"})
}

type runningManager struct {
	stop context.CancelFunc
	done chan struct{}
	// url is the pod webhook's URL it registered.
	url string
	// cache is the manager's cache: the ledger reads it, and a test waits
	// on it to know what the webhook has seen.
	cache client.Reader
}

// Stop stops the manager and waits until it has.
func (r *runningManager) Stop() {
	r.stop()
	<-r.done
}

func startManager(cfg *rest.Config, o Options) (*runningManager, error) {
	byObject := shadowpod.Caches(quota.QuotaFields)
	byObject[&networkingv1.Ingress{}] = reflected.IngressCache()
	mgr, err := testbed.NewManager(cfg, cache.Options{ByObject: byObject})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	before, _ := registeredURL(ctx)
	if err := Setup(ctx, mgr, o); err != nil {
		cancel()
		return nil, err
	}
	r := &runningManager{stop: cancel, done: make(chan struct{}), cache: mgr.GetCache()}
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
		r.url = url
		return err == nil && url != "" && url != before, nil
	})
	if err != nil {
		r.Stop()
		return nil, fmt.Errorf("the webhooks were not registered: %w", err)
	}
	return r, nil
}
