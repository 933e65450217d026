package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	"github.com/liqo-go/liqo/deploy/charts/liqo/crds"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/proc"
	"github.com/liqo-go/liqo/pkg/testbed"
)

// buildManager builds the controller manager binary into dir, so that the
// suites run it as a process of its own whose RSS and CPU time /proc tells.
func buildManager(ctx context.Context, dir string) (string, error) {
	manager := filepath.Join(dir, "liqo-controller-manager")
	fmt.Fprintln(os.Stderr, "bench: building liqo-controller-manager")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", manager,
		"github.com/liqo-go/liqo/cmd/liqo-controller-manager").CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the controller manager: %v\n%s", err, out)
	}
	return manager, nil
}

// managerWorkDir makes a temporary directory for a suite's kubeconfigs and
// logs and builds the controller manager binary into it; cleanup removes
// it.
func managerWorkDir(ctx context.Context, suite string) (dir, manager string, cleanup func(), err error) {
	if dir, err = os.MkdirTemp("", "liqo-bench-"+suite+"-"); err != nil {
		return "", "", nil, err
	}
	cleanup = func() { _ = os.RemoveAll(dir) }
	if manager, err = buildManager(ctx, dir); err != nil {
		cleanup()
		return "", "", nil, err
	}
	return dir, manager, cleanup, nil
}

// pair is a consumer and a provider cluster, each with its controller
// manager running as a process, the consumer peered to the provider.
type pair struct {
	tb *testbed.Testbed
	// kubeconfigs, logs and pids are the clusters' and their managers', by
	// cluster name.
	kubeconfigs, logs map[string]string
	pids              map[string]int
	// pprof are the managers' /debug/pprof addresses, by cluster name.
	pprof map[string]string
	// consumer is a client of the consumer cluster.
	consumer client.Client
	stops    []func()
}

// startPair starts the two clusters ("consumer" and "provider" are their
// names), their managers (binary manager, files in dir), and peers them
// with liqoctl and the extra peer flags, its output to peerOut. Stop ends
// it all; on an error it is all ended already, the managers' logs printed.
func startPair(ctx context.Context, bins *testbed.Binaries, manager, dir string, consumer, provider testbed.ClusterSpec,
	peerOut io.Writer, peerFlags ...string) (*pair, error) {
	tb, err := testbed.Start(ctx, testbed.Options{Binaries: bins}, consumer, provider)
	if err != nil {
		return nil, err
	}
	p := &pair{tb: tb, kubeconfigs: map[string]string{}, logs: map[string]string{}, pids: map[string]int{}, pprof: map[string]string{}}
	if err := p.start(ctx, manager, dir, peerOut, peerFlags); err != nil {
		p.tailLogs()
		p.Stop()
		return nil, err
	}
	return p, nil
}

// tailLogs prints the end of each manager's log, which tells why a suite
// failed.
func (p *pair) tailLogs() {
	for name, path := range p.logs {
		fmt.Fprintf(os.Stderr, "bench: last lines of the %s manager's log (%s):\n%s\n", name, path, proc.TailFile(path, 30))
	}
}

func (p *pair) start(ctx context.Context, manager, dir string, peerOut io.Writer, peerFlags []string) error {
	for _, c := range p.tb.Clusters {
		p.kubeconfigs[c.Name] = filepath.Join(dir, c.Name+".kubeconfig")
		if err := c.WriteKubeconfig(p.kubeconfigs[c.Name]); err != nil {
			return err
		}
		if err := crds.Install(ctx, c.Config); err != nil {
			return err
		}
		p.logs[c.Name] = filepath.Join(dir, c.Name+"-manager.log")
		addr, err := freeAddr()
		if err != nil {
			return err
		}
		p.pprof[c.Name] = addr
		pid, stop, err := startManager(ctx, manager, p.kubeconfigs[c.Name], c.Name, p.logs[c.Name], p.pprof[c.Name])
		if err != nil {
			return err
		}
		p.stops = append(p.stops, stop)
		p.pids[c.Name] = pid
	}
	for _, c := range p.tb.Clusters {
		if err := factory.WaitForComponents(ctx, p.kubeconfigs[c.Name], consts.DefaultNamespace, time.Minute); err != nil {
			return err
		}
	}
	time.Sleep(settle)
	peer := liqoctl.NewRootCommand()
	peer.SetOut(peerOut)
	peer.SetArgs(append([]string{"peer", "--networking-disabled", "--kubeconfig", p.kubeconfigs["consumer"],
		"--remote-kubeconfig", p.kubeconfigs["provider"]}, peerFlags...))
	if err := peer.ExecuteContext(ctx); err != nil {
		return fmt.Errorf("peer: %w", err)
	}
	var err error
	p.consumer, err = client.New(p.tb.Cluster("consumer").Config, client.Options{Scheme: apis.NewScheme()})
	return err
}

// Stop ends the managers, then the clusters.
func (p *pair) Stop() {
	for _, stop := range p.stops {
		stop()
	}
	p.tb.Stop()
}
