package webhook

import (
	"context"
	"fmt"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/liqo-go/liqo/pkg/controllermanager/shadowpod"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
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
	running *webhooktest.Manager
)

// mainOptions are running's: callers must present the API server's client
// certificate, so every test going through the API server shows it does;
// the registration is checked every second, so a test stopping another
// replica sees running take over quickly. The handlers' policies are the
// defaults: their packages test them.
func mainOptions() Options {
	return Options{Addr: "127.0.0.1:0", Serving: ServingOptions{ClientCAFile: webhooktest.ClientCAFile,
		ClientNames: []string{testbed.WebhookClientName}, CheckInterval: time.Second}}
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
	webhooktest.Main(m, "webhook", func() error {
		cluster, cl = webhooktest.Cluster, webhooktest.Cl
		var err error
		running, err = startManager(cluster.Config, mainOptions())
		return err
	})
}

// startManager starts a manager serving the webhooks with o, its caches
// as in production.
func startManager(cfg *rest.Config, o Options) (*webhooktest.Manager, error) {
	byObject := shadowpod.Caches(quota.QuotaFields)
	byObject[&networkingv1.Ingress{}] = reflected.IngressCache()
	return webhooktest.StartManager(cfg, byObject, MutatingConfigurationName, func(ctx context.Context, mgr manager.Manager) error {
		return Setup(ctx, mgr, o)
	})
}
