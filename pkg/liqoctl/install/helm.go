package install

import (
	"context"
	"errors"
	"fmt"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
)

// ReleaseName is the Helm release liqoctl installs, as the reference's.
const ReleaseName = "liqo"

// helmConfig is a Helm action configuration on the cluster c, for
// releases in namespace.
func helmConfig(c *factory.Cluster, namespace string, debug func(string, ...any)) (*action.Configuration, error) {
	flags := genericclioptions.NewConfigFlags(false)
	if c.Kubeconfig != "" {
		flags.KubeConfig = &c.Kubeconfig
	}
	if c.Context != "" {
		flags.Context = &c.Context
	}
	flags.Namespace = &namespace
	cfg := &action.Configuration{}
	if err := cfg.Init(flags, namespace, "secret", debug); err != nil {
		return nil, fmt.Errorf("setting up Helm: %w", err)
	}
	return cfg, nil
}

// installed is the deployed release, nil if there is none.
func installed(cfg *action.Configuration) (*release.Release, error) {
	rel, err := action.NewGet(cfg).Run(ReleaseName)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, nil
	}
	return rel, err
}

// installOrUpgrade installs the chart as release liqo, or upgrades the
// release in place, waiting until every workload is ready and undoing the
// change if it is not within timeout. The CRDs are not Helm's to install:
// Helm never updates them, so liqoctl applies them itself first.
func installOrUpgrade(ctx context.Context, cfg *action.Configuration, namespace string, c *chart.Chart, vals map[string]any, timeout time.Duration) (*release.Release, bool, error) {
	prev, err := installed(cfg)
	if err != nil {
		return nil, false, fmt.Errorf("reading the release %s: %w", ReleaseName, err)
	}
	if prev == nil {
		in := action.NewInstall(cfg)
		in.ReleaseName, in.Namespace, in.CreateNamespace = ReleaseName, namespace, true
		in.Wait, in.Timeout, in.Atomic, in.SkipCRDs = true, timeout, true, true
		rel, err := in.RunWithContext(ctx, c, vals)
		return rel, false, err
	}
	up := action.NewUpgrade(cfg)
	up.Namespace = namespace
	up.Wait, up.Timeout, up.Atomic, up.SkipCRDs = true, timeout, true, true
	up.MaxHistory = 10
	rel, err := up.RunWithContext(ctx, ReleaseName, c, vals)
	return rel, true, err
}
