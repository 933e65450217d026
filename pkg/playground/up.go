package playground

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/liqo-go/liqo/pkg/images"
	"github.com/liqo-go/liqo/pkg/images/catalog"
	"github.com/liqo-go/liqo/pkg/proc"
	"github.com/liqo-go/liqo/pkg/testbed"
)

type upOptions struct {
	clusters  []string
	nodes     int
	realNodes int
	// realNodesSet is true when the user asked for real nodes explicitly:
	// then a machine that cannot run them is an error, not a fallback.
	realNodesSet bool
	apiPort      int
	timeout      time.Duration
	noPeer       bool
}

func newUpCommand(dir *string) *cobra.Command {
	o := upOptions{clusters: []string{"rome", "milan"}, nodes: 2, realNodes: 1, timeout: 10 * time.Minute}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start the playground clusters in the background",
		Long: `Start the playground clusters in the background and return once every one
of them is ready. On a machine whose cache is empty this first builds the
control-plane binaries from the Go module proxy (~8 minutes on 2 cores);
later runs start in seconds. Clusters that are already running are kept.

Each cluster runs the liqo controller manager; with two clusters or more, the
first one (the consumer) is then peered with the second (the provider), so
the provider shows up as a virtual node in the consumer. The consumer's
namespace liqo-demo is then offloaded to the provider and runs a Deployment
"demo" with one replica per node, so one of them runs on the virtual node
(its pod runs in the twin namespace liqo-demo-<consumer> on the provider).

Next to the simulated nodes (kwok: pods only pretend to run), each cluster
gets --real-nodes real nodes: containerd, kubelet, CNI and kube-proxy in a
network namespace of their own, running real containers from images the
playground serves itself (busybox, CoreDNS), with cluster DNS. Real nodes
need root; without root, up falls back to simulated nodes only and says so.`,
		Example: `  liqo-playground up
  liqo-playground up --clusters rome,milan,naples --nodes 3
  liqo-playground up --nodes 0 --real-nodes 2     # real nodes only
  kubectl --kubeconfig ~/.liqo/playground/rome.kubeconfig get nodes
  kubectl --kubeconfig ~/.liqo/playground/rome.kubeconfig get pods -n liqo-demo -o wide
  kubectl --kubeconfig ~/.liqo/playground/milan.kubeconfig get pods -n liqo-demo-rome`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.realNodesSet = cmd.Flags().Changed("real-nodes")
			return up(cmd.Context(), cmd.OutOrStdout(), layout{*dir}, o)
		},
	}
	cmd.Flags().StringSliceVar(&o.clusters, "clusters", o.clusters, "names of the clusters to start")
	cmd.Flags().IntVar(&o.nodes, "nodes", o.nodes, "simulated worker nodes per cluster")
	cmd.Flags().IntVar(&o.realNodes, "real-nodes", o.realNodes, "real worker nodes per cluster (they run containers; need root)")
	cmd.Flags().IntVar(&o.apiPort, "api-port", 0,
		"API server port of the first cluster; the next clusters use the following ports (0: any free port)")
	cmd.Flags().DurationVar(&o.timeout, "timeout", o.timeout, "how long to wait for the clusters to be ready, after the build")
	cmd.Flags().BoolVar(&o.noPeer, "no-peer", false, "do not peer the first cluster (consumer) with the second (provider)")
	return cmd
}

func up(ctx context.Context, out io.Writer, l layout, o upOptions) error {
	if len(o.clusters) == 0 {
		return errors.New("--clusters is empty: name at least one cluster")
	}
	if o.nodes < 0 {
		return fmt.Errorf("--nodes must not be negative, got %d", o.nodes)
	}
	if o.realNodes < 0 {
		return fmt.Errorf("--real-nodes must not be negative, got %d", o.realNodes)
	}
	if o.realNodes > 0 {
		if err := testbed.RealNodesSupported(); err != nil {
			if o.realNodesSet {
				return fmt.Errorf("--real-nodes %d: %w", o.realNodes, err)
			}
			fmt.Fprintf(out, "note: %v\nnote: starting simulated nodes only; run `sudo liqo-playground up` for a real node per cluster\n", err)
			o.realNodes = 0
		}
	}
	if o.nodes == 0 && o.realNodes == 0 {
		return errors.New("--nodes 0 and no real nodes: a cluster needs at least one worker node")
	}
	seen := map[string]bool{}
	for _, name := range o.clusters {
		if seen[name] {
			return fmt.Errorf("cluster %q is listed twice in --clusters", name)
		}
		seen[name] = true
		if err := (testbed.ClusterSpec{Name: name}).Validate(); err != nil {
			return err
		}
	}
	if o.realNodes == 0 {
		// The owners run the manager binary: find it before starting anything.
		if _, err := managerBinary(); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(l.dir, 0o755); err != nil {
		return fmt.Errorf("creating the playground directory: %w", err)
	}

	// Build in the foreground, so the user sees the progress of a cold build.
	bins, err := testbed.EnsureBinaries(ctx, testbed.BuildOptions{Progress: out, RealNodes: o.realNodes > 0})
	if err != nil {
		return err
	}
	if err := linkKubectl(l, bins.Kubectl); err != nil {
		return err
	}
	if o.realNodes > 0 {
		// Once, here, before any cluster's owner starts: owners would each
		// run apt-get, and dpkg takes one install at a time.
		if err := testbed.EnsureHostPackages(ctx, out); err != nil {
			return err
		}
		// The network fabric's images, built once here with progress (a
		// cold build compiles for minutes): the clusters' owners then
		// find everything in Go's build cache.
		for _, name := range []string{catalog.Gateway, catalog.Fabric} {
			comp, err := catalog.Lookup(name)
			if err == nil {
				_, err = images.BuildComponent(ctx, comp, images.BuildOptions{
					Platforms: []v1.Platform{{OS: "linux", Architecture: runtime.GOARCH}}, Version: testbed.TestImageTag, Progress: out})
			}
			if err != nil {
				fmt.Fprintf(out, "WARN: the network fabric's %s image cannot be built here (%v): the clusters run without networking\n", name, err)
				break
			}
		}
	}

	var started []string
	for i, name := range o.clusters {
		if st, err := l.read(name); err == nil {
			if ownerAlive(st) {
				fmt.Fprintf(out, "cluster %s is already running (phase %s)\n", name, st.Phase)
				continue
			}
			cleanup(l, name) // left by a crashed owner
		}
		port := 0
		if o.apiPort != 0 {
			port = o.apiPort + i
		}
		if err := spawnOwner(l, serveOptions{cluster: name, apiPort: port, nodes: o.nodes, realNodes: o.realNodes}); err != nil {
			stopOwners(l, started, out)
			return err
		}
		started = append(started, name)
		fmt.Fprintf(out, "starting cluster %s (log: %s)\n", name, l.log(name))
	}

	if err := waitReady(ctx, l, o.clusters, o.timeout, out); err != nil {
		stopOwners(l, started, out)
		return err
	}
	if len(o.clusters) >= 2 && !o.noPeer {
		networking := true
		for _, name := range o.clusters[:2] {
			st, err := l.read(name)
			networking = networking && err == nil && st.Networking
		}
		if err := peerFirstTwo(ctx, out, l, o.clusters[0], o.clusters[1], networking); err != nil {
			return fmt.Errorf("the clusters run, but peering %s with %s failed: %w", o.clusters[0], o.clusters[1], err)
		}
		if err := offloadDemo(ctx, out, l, o.clusters[0], networking); err != nil {
			return fmt.Errorf("the clusters run and are peered, but the %s demo failed: %w", demoNamespace, err)
		}
	}
	printReady(out, l, o.clusters)
	return nil
}

// spawnOwner starts `liqo-playground serve` detached from this session.
func spawnOwner(l layout, o serveOptions) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	logFile, err := os.OpenFile(l.log(o.cluster), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := exec.Command(self, "serve", "--dir="+l.dir, "--cluster="+o.cluster,
		"--api-port="+strconv.Itoa(o.apiPort), "--nodes="+strconv.Itoa(o.nodes), "--real-nodes="+strconv.Itoa(o.realNodes))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // survives the terminal
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the owner of cluster %s: %w", o.cluster, err)
	}
	// Record the PID at once, so `down` can stop a cluster that is still starting.
	if err := l.write(&clusterState{Name: o.cluster, PID: cmd.Process.Pid, Phase: phaseStarting}); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }() // reap it if it dies while we wait
	return nil
}

// waitReady waits until every cluster's owner reports Ready, failing with the
// owner's error and log as soon as one fails or dies.
func waitReady(ctx context.Context, l layout, names []string, timeout time.Duration, out io.Writer) error {
	reported := map[string]bool{}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		pending := 0
		for _, name := range names {
			st, err := l.read(name)
			switch {
			case err == nil && st.Phase == phaseReady:
				if !reported[name] {
					fmt.Fprintf(out, "cluster %s is ready\n", name)
					reported[name] = true
				}
				continue
			case err == nil && st.Phase == phaseFailed:
				return false, fmt.Errorf("cluster %s failed to start: %s", name, st.Error)
			case err == nil && ownerGone(st):
				return false, fmt.Errorf("the owner process of cluster %s exited; its log %s ends with:\n%s",
					name, l.log(name), proc.TailFile(l.log(name), 20))
			}
			pending++
		}
		return pending == 0, nil
	})
	switch {
	case err == nil || ctx.Err() != nil || !wait.Interrupted(err):
		return err
	default:
		return fmt.Errorf("clusters not ready after %s; see the logs in %s", timeout, l.dir)
	}
}

func linkKubectl(l layout, kubectl string) error {
	if err := os.MkdirAll(l.bin(), 0o755); err != nil {
		return err
	}
	link := filepath.Join(l.bin(), "kubectl")
	_ = os.Remove(link)
	return os.Symlink(kubectl, link)
}

func printReady(out io.Writer, l layout, names []string) {
	fmt.Fprintf(out, "\nThe playground is ready: %d cluster(s) in %s\n\n", len(names), l.dir)
	for _, name := range names {
		if st, err := l.read(name); err == nil {
			fmt.Fprintf(out, "  %-10s %-26s %s\n", name, st.Server, st.Kubeconfig)
		}
	}
	first := l.kubeconfig(names[0])
	fmt.Fprintf(out, `
Use them with kubectl (a matching kubectl is linked in %[1]s):

  export PATH="%[1]s:$PATH"
  kubectl --kubeconfig %[2]s get nodes
  export KUBECONFIG=%[2]s    # or pick a cluster for the whole shell

Stop them with: liqo-playground down%[3]s
`, l.bin(), first, dirFlag(l))
}

func dirFlag(l layout) string {
	if l.dir == defaultDir() {
		return ""
	}
	return " --dir " + l.dir
}
