package webhooktest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/liqo-go/liqo/pkg/testbed"
)

// The cluster of a test package, set by Main before the tests run.
var (
	Cluster *testbed.Cluster
	// Cl is an uncached admin client: what the tests check is the API
	// server's state.
	Cl client.Client
	// ClientCAFile holds the cluster's CA, which signs the client
	// certificate the testbed's API server presents to webhooks.
	ClientCAFile string
)

// Main starts one cluster named name, sets Cluster, Cl and ClientCAFile,
// calls start (which starts the manager serving the webhooks) and runs m.
func Main(m *testing.M, name string, start func() error) {
	testbed.Main(m, func(tb *testbed.Testbed) {
		Cluster = tb.Clusters[0]
		ClientCAFile = filepath.Join(Cluster.Dir, "webhook-client-ca.crt")
		err := os.WriteFile(ClientCAFile, Cluster.Config.CAData, 0o600)
		if err == nil {
			Cl, err = Cluster.WithCRDs(context.Background())
		}
		if err == nil {
			err = start()
		}
		testbed.Must(tb, err)
	}, testbed.ClusterSpec{Name: name})
}

// Manager is a manager serving the webhooks.
type Manager struct {
	stop context.CancelFunc
	done chan struct{}
	// URL is the pod webhook's URL it registered.
	URL string
	// Cache is the manager's cache: the ledger reads it, and a test waits
	// on it to know what the webhook has seen.
	Cache client.Reader
}

// Stop stops the manager and waits until it has.
func (r *Manager) Stop() {
	r.stop()
	<-r.done
}

// RegisteredURL is the pod webhook's URL in the mutating webhook
// configuration named mutating.
func RegisteredURL(ctx context.Context, mutating string) (string, error) {
	var m admissionv1.MutatingWebhookConfiguration
	if err := Cl.Get(ctx, client.ObjectKey{Name: mutating}, &m); err != nil {
		return "", err
	}
	if len(m.Webhooks) == 0 || m.Webhooks[0].ClientConfig.URL == nil {
		return "", nil
	}
	return *m.Webhooks[0].ClientConfig.URL, nil
}

// StartManager starts a manager on cfg with the caches byObject, set up by
// setup, and returns once the mutating webhook configuration named
// mutating names its server, not the one before it.
func StartManager(cfg *rest.Config, byObject map[client.Object]cache.ByObject, mutating string,
	setup func(context.Context, manager.Manager) error) (*Manager, error) {
	mgr, err := testbed.NewManager(cfg, cache.Options{ByObject: byObject})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	before, _ := RegisteredURL(ctx, mutating)
	if err := setup(ctx, mgr); err != nil {
		cancel()
		return nil, err
	}
	r := &Manager{stop: cancel, done: make(chan struct{}), Cache: mgr.GetCache()}
	go func() {
		defer close(r.done)
		if err := mgr.Start(ctx); err != nil {
			fmt.Fprintln(os.Stderr, "manager stopped:", err)
		}
	}()
	wctx, wcancel := context.WithTimeout(ctx, time.Minute)
	defer wcancel()
	err = wait.PollUntilContextCancel(wctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		url, err := RegisteredURL(ctx, mutating)
		r.URL = url
		return err == nil && url != "" && url != before, nil
	})
	if err != nil {
		r.Stop()
		return nil, fmt.Errorf("the webhooks were not registered: %w", err)
	}
	return r, nil
}
