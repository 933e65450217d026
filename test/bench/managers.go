package main

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/testbed"
)

// startManagers runs a controller manager for every cluster of tb until
// ctx ends (configure, when set, adjusts each one's options), writes the
// clusters' kubeconfigs into a temporary directory and waits until every
// manager holds its lease. cleanup removes the directory.
func startManagers(ctx context.Context, tb *testbed.Testbed, configure func(*testbed.Cluster, *controllermanager.Options) error) (kubeconfigs map[string]string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "liqo-bench-")
	if err != nil {
		return nil, nil, err
	}
	cleanup = func() { _ = os.RemoveAll(dir) }
	kubeconfigs = map[string]string{}
	for _, c := range tb.Clusters {
		kubeconfigs[c.Name] = filepath.Join(dir, c.Name+".kubeconfig")
		if err := c.WriteKubeconfig(kubeconfigs[c.Name]); err != nil {
			return nil, cleanup, err
		}
		o := controllermanager.DefaultOptions()
		o.ClusterID, o.Logger = c.Name, logr.Discard()
		if configure != nil {
			if err := configure(c, &o); err != nil {
				return nil, cleanup, err
			}
		}
		go controllermanager.RunLocal(ctx, c.Config, o, nil)
	}
	for _, c := range tb.Clusters {
		if err := factory.WaitForComponents(ctx, kubeconfigs[c.Name], consts.DefaultNamespace, time.Minute); err != nil {
			return nil, cleanup, err
		}
	}
	return kubeconfigs, cleanup, nil
}
