package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-logr/logr"

	"github.com/liqo-go/liqo/deploy/charts/liqo/crds"
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

// fabricManagers runs, for every cluster of tb, the controller manager
// binary as a process of its own with the network fabric on (its images
// pushed into the cluster's registry), its log in dir, and waits until
// every one holds its lease. stop ends them all.
func fabricManagers(ctx context.Context, tb *testbed.Testbed, manager, dir string) (kubeconfigs map[string]string, pids map[string]int, stop func(), err error) {
	kubeconfigs, pids = map[string]string{}, map[string]int{}
	var stops []func()
	stop = func() {
		for _, s := range stops {
			s()
		}
	}
	logPath := func(c *testbed.Cluster) string { return filepath.Join(dir, c.Name+"-manager.log") }
	for _, c := range tb.Clusters {
		kubeconfigs[c.Name] = filepath.Join(dir, c.Name+".kubeconfig")
		if err := c.WriteKubeconfig(kubeconfigs[c.Name]); err != nil {
			return nil, nil, stop, err
		}
		if err := crds.Install(ctx, c.Config); err != nil {
			return nil, nil, stop, err
		}
		flags, err := fabricFlags(ctx, c)
		if err != nil {
			return nil, nil, stop, fmt.Errorf("%s: %w", c.Name, err)
		}
		pid, s, err := startManager(ctx, manager, kubeconfigs[c.Name], c.Name, logPath(c), "0", flags...)
		if err != nil {
			return nil, nil, stop, err
		}
		pids[c.Name], stops = pid, append(stops, s)
	}
	for _, c := range tb.Clusters {
		if err := factory.WaitForComponents(ctx, kubeconfigs[c.Name], consts.DefaultNamespace, 2*time.Minute); err != nil {
			return nil, nil, stop, fmt.Errorf("%s: %w (its log: %s)", c.Name, err, tailFile(logPath(c)))
		}
	}
	return kubeconfigs, pids, stop, nil
}
