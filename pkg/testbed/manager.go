package testbed

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/liqo-go/liqo/apis"
	"github.com/liqo-go/liqo/deploy/charts/liqo/crds"
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

// WithCRDs installs the project's CRDs in c and returns an admin client
// with the project's scheme: what most controller tests start from.
func (c *Cluster) WithCRDs(ctx context.Context) (client.Client, error) {
	if err := crds.Install(ctx, c.Config); err != nil {
		return nil, fmt.Errorf("installing the CRDs in %s: %w", c.Name, err)
	}
	return client.New(c.Config, client.Options{Scheme: apis.NewScheme()})
}

// Must ends a TestMain's setup that failed: it stops the clusters and
// exits with the error.
func Must(tb *Testbed, err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "setting up the testbed:", err)
		tb.Stop()
		tb.keepLogDirs()
		os.Exit(1)
	}
}

// LogDir makes a directory for the logs of a test package that runs
// controller managers in-process, and sends what logs through klog
// (client-go, leader election, virtual-kubelet) and through
// controller-runtime's global logger to its shared.log, out of the test
// output. It returns the directory. Main removes it when the package
// passes and keeps it (naming it) when a test or the setup fails: the logs
// are what tells a failure's story, and a passing run needs none.
func (tb *Testbed) LogDir(prefix string) (string, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", err
	}
	tb.logDirs = append(tb.logDirs, dir)
	shared, err := os.Create(filepath.Join(dir, "shared.log"))
	if err != nil {
		return "", err
	}
	klog.LogToStderr(false)
	klog.SetOutput(shared)
	ctrl.SetLogger(zap.New(zap.WriteTo(shared)))
	return dir, nil
}

// keepLogDirs names the log directories a failed run leaves for reading.
func (tb *Testbed) keepLogDirs() {
	for _, dir := range tb.logDirs {
		fmt.Fprintln(os.Stderr, "the managers' logs are kept in", dir)
	}
}

// removeLogDirs removes the log directories of a run that passed.
func (tb *Testbed) removeLogDirs() {
	for _, dir := range tb.logDirs {
		_ = os.RemoveAll(dir)
	}
}
