package testbed

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/liqo-go/liqo/apis"
)

var setLoggerOnce sync.Once

// TestLogger logs errors only, to stderr: they are what tells a failing
// test's story. It is also controller-runtime's (and so client-go's)
// global logger from the first call on.
func TestLogger() logr.Logger {
	logger := funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, "manager:", prefix, args) },
		funcr.Options{Verbosity: -1})
	setLoggerOnce.Do(func() { ctrl.SetLogger(logger) })
	return logger
}

// NewManager is a controller-runtime manager for a test binary: the
// project's scheme, the given cache restrictions, no metrics endpoint, and
// controller names that may repeat (tests set the same controller up
// again).
func NewManager(cfg *rest.Config, c cache.Options) (ctrl.Manager, error) {
	return ctrl.NewManager(cfg, ctrl.Options{
		Scheme:     apis.NewScheme(),
		Cache:      c,
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Logger:     TestLogger(),
	})
}

// StartManager starts mgr for the rest of the test binary (the testbed
// stops the clusters right before the process exits) and waits until its
// cache is synced.
func StartManager(ctx context.Context, mgr ctrl.Manager) error {
	go func() {
		if err := mgr.Start(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "manager stopped:", err)
		}
	}()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		return fmt.Errorf("the manager's cache did not sync")
	}
	return nil
}
