package playground

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/liqo-go/liqo/pkg/testbed"
)

func newDownCommand(dir *string) *cobra.Command {
	var clusters []string
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Stop playground clusters and remove their data",
		Long: `Stop the playground clusters (all of them unless --clusters names some) and
remove their kubeconfigs and data. Only processes the playground started are
stopped. Real nodes go with their cluster: their containers, network
namespaces, links, mounts, cgroups and firewall rules are removed, and so is
whatever an owner that crashed left behind.`,
		Example: `  liqo-playground down
  liqo-playground down --clusters milan`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return down(cmd.OutOrStdout(), layout{*dir}, clusters)
		},
	}
	cmd.Flags().StringSliceVar(&clusters, "clusters", nil, "names of the clusters to stop (default: all)")
	return cmd
}

func down(out io.Writer, l layout, names []string) error {
	known := l.names()
	if len(names) == 0 {
		if len(known) == 0 {
			fmt.Fprintf(out, "no playground cluster in %s: nothing to stop\n", l.dir)
			return nil
		}
		names = known
	}
	for _, name := range names {
		if !slices.Contains(known, name) {
			if len(known) == 0 {
				return fmt.Errorf("unknown cluster %q: no playground cluster runs in %s", name, l.dir)
			}
			return fmt.Errorf("unknown cluster %q: the playground in %s has %s", name, l.dir, strings.Join(known, ", "))
		}
	}
	stopOwners(l, names, out)
	for _, name := range names {
		_ = os.Remove(l.log(name))
	}
	if len(l.names()) == 0 {
		_ = os.RemoveAll(l.data())
		_ = os.RemoveAll(l.bin())
		_ = os.Remove(l.dir) // only if empty: the user may keep other files there
	}
	return nil
}

// stopOwners sends SIGTERM to each cluster's owner and waits for it to stop
// its control plane, killing it after a grace period. The owner's children
// die with it (PDEATHSIG), so nothing is left behind either way.
func stopOwners(l layout, names []string, out io.Writer) {
	for _, name := range names {
		st, err := l.read(name)
		if err == nil && ownerAlive(st) {
			fmt.Fprintf(out, "stopping cluster %s\n", name)
			_ = syscall.Kill(st.PID, syscall.SIGTERM)
			waitGone(st, 30*time.Second)
			if ownerAlive(st) {
				_ = syscall.Kill(st.PID, syscall.SIGKILL)
				waitGone(st, 5*time.Second)
			}
		}
		cleanup(l, name)
		fmt.Fprintf(out, "cluster %s stopped\n", name)
	}
}

// waitGone waits up to timeout for the owner to exit; the caller looks
// again, so the timeout needs no error.
func waitGone(st *clusterState, timeout time.Duration) {
	_ = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return !ownerAlive(st), nil
	})
}

// cleanup removes what a cluster's owner leaves when it could not clean up:
// first the real nodes of owners that died (container processes, mounts,
// network namespaces, cgroups), then the files.
func cleanup(l layout, name string) {
	_ = testbed.SweepHost()
	_ = os.Remove(l.state(name))
	_ = os.Remove(l.kubeconfig(name))
	_ = os.RemoveAll(filepath.Join(l.data(), name))
}
