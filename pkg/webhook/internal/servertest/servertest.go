// Package servertest starts, for the tests of the webhook packages through
// the API server, one cluster and a manager serving every webhook as the
// controller manager does.
package servertest

import (
	"context"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/liqo-go/liqo/pkg/controllermanager/shadowpod"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/pkg/webhook"
	"github.com/liqo-go/liqo/pkg/webhook/budget"
	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
	"github.com/liqo-go/liqo/pkg/webhook/podpolicy"
	"github.com/liqo-go/liqo/pkg/webhook/quota"
	"github.com/liqo-go/liqo/pkg/webhook/reflected"
)

// The ObjectBudget of Options: small enough for a test to fill, large
// enough for every other test's consumer.
const (
	BudgetBytes = 4 << 20
	BudgetCount = 60
)

// Options are the options of the server the tests run: callers must
// present the API server's client certificate, so every test going
// through the API server shows it does; the registration is checked every
// second, so a test stopping another replica sees the next take over
// quickly.
func Options() webhook.Options {
	return webhook.Options{Addr: "127.0.0.1:0", Serving: webhook.ServingOptions{ClientCAFile: webhooktest.ClientCAFile,
		ClientNames: []string{testbed.WebhookClientName}, CheckInterval: time.Second},
		Pods: podpolicy.PodPolicy{RuntimeClasses: []string{"nvidia"}, VirtualStorageClass: "liqo"},
		// A provider serving its consumers' Ingresses on its nginx class,
		// with one of nginx's annotations allowed besides the inert ones.
		Reflected: reflected.ReflectedPolicy{VirtualStorageClass: "liqo", IngressClasses: []string{"nginx"},
			Annotations: []string{"nginx.ingress.kubernetes.io/rewrite-target"}},
		Objects: budget.ObjectBudget{MaxBytes: resource.QuantityValue{Quantity: *resource.NewQuantity(BudgetBytes, resource.BinarySI)},
			MaxCount: BudgetCount}}
}

// Start starts a manager serving every webhook with o, with the Pod cache
// limited as in production and no other controller.
func Start(o webhook.Options) (*webhooktest.Manager, error) {
	byObject := shadowpod.Caches(quota.QuotaFields)
	byObject[&networkingv1.Ingress{}] = reflected.IngressCache()
	return webhooktest.StartManager(webhooktest.Cluster.Config, byObject, webhook.MutatingConfigurationName,
		func(ctx context.Context, mgr manager.Manager) error { return webhook.Setup(ctx, mgr, o) })
}

// Main starts one cluster named name and a manager serving every webhook
// with Options, which running is set to, and runs m.
func Main(m *testing.M, name string, running **webhooktest.Manager) {
	webhooktest.Main(m, name, func() error {
		var err error
		*running, err = Start(Options())
		return err
	})
}
