package testbed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/liqo-go/liqo/pkg/proc"
)

// Options configures Start.
type Options struct {
	// Dir is where cluster folders are created and kept after Stop; a new
	// temporary directory, removed by Stop, if empty.
	Dir string
	// Binaries to run; EnsureBinaries(Build) if nil.
	Binaries *Binaries
	Build    BuildOptions
	// Progress receives human-readable progress lines; nothing if nil.
	Progress io.Writer
	// Timeout bounds the start of all clusters (3 minutes if zero).
	Timeout time.Duration
	// Underlay names the network the clusters' real nodes share (at most 8
	// characters): testbeds that give the same name reach each other's
	// nodes, as the playground's clusters, each started by its own process,
	// do. A fresh underlay for this testbed if empty.
	Underlay string
}

// Testbed is a set of running clusters.
type Testbed struct {
	// Dir holds one folder per cluster.
	Dir      string
	Clusters []*Cluster
	ownDir   bool
	// underlay is the real nodes' network; ownUnderlay if made for this
	// testbed alone (so Stop removes it).
	underlay    string
	ownUnderlay bool
	// logDirs are the managers' log directories (LogDir): removed when
	// the tests pass, kept when they fail.
	logDirs []string
	// beforeStop runs when the tests are over, before Main stops the
	// clusters (BeforeStop).
	beforeStop []func()
}

// ownerFile records the PID of the process that owns a testbed directory, so
// that a later run can sweep directories left by a crashed one.
const ownerFile = "owner.pid"

const tempPrefix = "liqo-testbed-"

// Start builds (if needed) the binaries and starts the given clusters
// concurrently, returning once every cluster can run pods. On error, whatever
// was started is stopped again.
//
// A component's port is picked free, then bound by the component a moment
// later; another program (any outgoing connection takes an ephemeral port)
// may take it in between. Such a start is stopped and made again with new
// ports, up to startAttempts times; so is a start where kwok died in its
// known start-up race.
func Start(ctx context.Context, opts Options, specs ...ClusterSpec) (*Testbed, error) {
	for attempt := 1; ; attempt++ {
		tb, err := startOnce(ctx, opts, specs...)
		if err == nil || attempt == startAttempts || ctx.Err() != nil {
			return tb, err
		}
		why := ""
		for _, hint := range []string{portTakenHint, kwokRaceHint} {
			if strings.Contains(err.Error(), hint) {
				why = hint
			}
		}
		if why == "" {
			return tb, err
		}
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, "testbed: %s while starting; starting again (attempt %d of %d)\n", why, attempt+1, startAttempts)
		}
	}
}

// startAttempts bounds Start's retries after a port was taken.
const startAttempts = 3

func startOnce(ctx context.Context, opts Options, specs ...ClusterSpec) (*Testbed, error) {
	if len(specs) == 0 {
		return nil, errors.New("testbed: no clusters to start")
	}
	if opts.Progress == nil {
		opts.Progress = io.Discard
	}
	if opts.Timeout == 0 {
		opts.Timeout = 3 * time.Minute
	}
	seen := map[string]bool{}
	for i := range specs {
		s, err := specs[i].withDefaults()
		if err != nil {
			return nil, err
		}
		if seen[s.Name] {
			return nil, fmt.Errorf("testbed: cluster name %q given twice", s.Name)
		}
		seen[s.Name] = true
		specs[i] = s
	}

	realNodes := false
	for _, s := range specs {
		realNodes = realNodes || s.RealNodes > 0
	}
	if realNodes {
		if err := RealNodesSupported(); err != nil {
			return nil, err
		}
		if err := EnsureHostPackages(ctx, opts.Progress); err != nil {
			return nil, err
		}
		opts.Build.RealNodes = true
	}
	bins := opts.Binaries
	if realNodes && bins != nil && !bins.HasRealNodeBinaries() {
		return nil, errors.New("testbed: real nodes need kubelet, kube-proxy, CoreDNS and pause: build the binaries with BuildOptions.RealNodes")
	}
	if bins == nil {
		if opts.Build.Progress == nil {
			opts.Build.Progress = opts.Progress
		}
		var err error
		if bins, err = EnsureBinaries(ctx, opts.Build); err != nil {
			return nil, err
		}
	}

	tb := &Testbed{Dir: opts.Dir}
	if tb.Dir == "" {
		// Real nodes' mounts first: a directory is removed only once nothing
		// is mounted below it.
		_ = SweepHost()
		sweepStale(os.TempDir())
		dir, err := os.MkdirTemp("", tempPrefix)
		if err != nil {
			return nil, err
		}
		tb.Dir, tb.ownDir = dir, true
	} else if err := os.MkdirAll(tb.Dir, 0o755); err != nil {
		return nil, err
	}
	if tb.ownDir {
		if err := os.WriteFile(filepath.Join(tb.Dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			tb.removeDir()
			return nil, err
		}
	}

	tb.underlay = opts.Underlay
	if tb.underlay == "" {
		tb.underlay, tb.ownUnderlay = newUnderlayName(), true
	}
	for _, s := range specs {
		c, err := newCluster(s, filepath.Join(tb.Dir, s.Name), bins, tb.underlay)
		if err != nil {
			tb.Stop()
			return nil, err
		}
		tb.Clusters = append(tb.Clusters, c)
	}

	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	start := time.Now()
	errs := make([]error, len(tb.Clusters))
	var wg sync.WaitGroup
	for i, c := range tb.Clusters {
		wg.Go(func() {
			fmt.Fprintf(opts.Progress, "testbed: starting cluster %s (API server %s)\n", c.Name, c.Server)
			if errs[i] = c.start(ctx); errs[i] == nil {
				fmt.Fprintf(opts.Progress, "testbed: cluster %s ready in %s\n", c.Name, time.Since(start).Round(10*time.Millisecond))
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		tb.Stop()
		return nil, err
	}
	return tb, nil
}

// Cluster returns the cluster with the given name, or nil.
func (tb *Testbed) Cluster(name string) *Cluster {
	for _, c := range tb.Clusters {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Stop ends every process the testbed started, frees its ports and, if
// Start created the directory, removes it.
func (tb *Testbed) Stop() {
	var wg sync.WaitGroup
	for _, c := range tb.Clusters {
		wg.Go(c.Stop)
	}
	wg.Wait()
	tb.removeDir()
}

func (tb *Testbed) removeDir() {
	if tb.ownDir {
		_ = os.RemoveAll(tb.Dir)
	}
}

// DumpLogs writes the tail of every component log of every cluster.
func (tb *Testbed) DumpLogs(w io.Writer, lines int) {
	for _, c := range tb.Clusters {
		c.DumpLogs(w, lines)
	}
}

// sweepStale removes temporary testbed directories whose owner process is
// gone. Their processes died with the owner (PDEATHSIG); only files remain.
func sweepStale(tmp string) {
	dirs, _ := filepath.Glob(filepath.Join(tmp, tempPrefix+"*"))
	for _, d := range dirs {
		data, err := os.ReadFile(filepath.Join(d, ownerFile))
		if err != nil {
			continue // not started yet, or not ours to judge
		}
		pid, err := strconv.Atoi(string(data))
		if err != nil || pid <= 0 || proc.Alive(pid) {
			continue
		}
		_ = os.RemoveAll(d)
	}
}
