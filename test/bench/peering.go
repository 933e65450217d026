package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/liqo-go/liqo/pkg/liqoctl"
	"github.com/liqo-go/liqo/pkg/testbed"
)

// settle is how long the components idle before the first peering.
const settle = 5 * time.Second

// peeringResult holds the time from `liqoctl peer` to a Ready virtual node:
// on a fresh pair, then again after each unpeer.
type peeringResult struct {
	fresh   time.Duration
	repeers []time.Duration
}

// benchPeering peers two fresh testbed clusters, each running our controller
// manager, and re-peers them after unpeers. The command returns once the
// virtual node is Ready, so its duration is the figure.
func benchPeering(ctx context.Context, bins *testbed.Binaries, repeats int) (*peeringResult, error) {
	ctrl.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
	tb, err := testbed.Start(ctx, testbed.Options{Binaries: bins},
		testbed.ClusterSpec{Name: "consumer"}, testbed.ClusterSpec{Name: "provider"})
	if err != nil {
		return nil, err
	}
	defer tb.Stop()
	mctx, stop := context.WithCancel(ctx)
	defer stop()
	kubeconfigs, cleanup, err := startManagers(mctx, tb, nil)
	if cleanup != nil {
		defer cleanup()
	}
	if err != nil {
		return nil, err
	}
	// A first peering is measured between clusters whose components are up
	// and idle, as after an install: right after the lease is taken, the
	// controllers are still filling their caches on a machine busy starting
	// two control planes.
	time.Sleep(settle)

	liqoctlRun := func(args ...string) (time.Duration, error) {
		cmd := liqoctl.NewRootCommand()
		cmd.SetOut(verboseOut(args))
		cmd.SetArgs(append(args, "--kubeconfig", kubeconfigs["consumer"], "--remote-kubeconfig", kubeconfigs["provider"]))
		start := time.Now()
		err := cmd.ExecuteContext(ctx)
		return time.Since(start), err
	}
	res := &peeringResult{}
	if res.fresh, err = liqoctlRun("peer", "--networking-disabled", "--verbose"); err != nil {
		return nil, fmt.Errorf("peer: %w", err)
	}
	fmt.Fprintf(os.Stderr, "bench: fresh peering, virtual node Ready after %s\n", res.fresh.Round(time.Millisecond))
	for range repeats {
		if _, err := liqoctlRun("unpeer"); err != nil {
			return nil, fmt.Errorf("unpeer: %w", err)
		}
		d, err := liqoctlRun("peer", "--networking-disabled")
		if err != nil {
			return nil, fmt.Errorf("re-peer: %w", err)
		}
		fmt.Fprintf(os.Stderr, "bench: re-peering, virtual node Ready after %s\n", d.Round(time.Millisecond))
		res.repeers = append(res.repeers, d)
	}
	return res, nil
}

func printPeering(r *peeringResult) {
	w := tabwriter.NewWriter(tables, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tables, "\nPeering (networking disabled): liqoctl peer → virtual node Ready (components idle %s before the first)\n", settle)
	fmt.Fprintln(w, "case\truns\tmin\tmedian\tmax\t")
	fmt.Fprintf(w, "fresh pair\t1\t%s\t%s\t%s\t\n", ms(r.fresh), ms(r.fresh), ms(r.fresh))
	record(measurement{Suite: "peering", Measure: "liqoctl peer → virtual node Ready, fresh pair", Unit: "s", Value: seconds(r.fresh)})
	if len(r.repeers) > 0 {
		s := slices.Clone(r.repeers)
		slices.Sort(s)
		fmt.Fprintf(w, "re-peer after unpeer\t%d\t%s\t%s\t%s\t\n", len(s), ms(s[0]), ms(s[len(s)/2]), ms(s[len(s)-1]))
		record(measurement{Suite: "peering", Measure: "liqoctl peer → virtual node Ready, re-peer after unpeer, median", N: len(s), Unit: "s", Value: seconds(s[len(s)/2])})
	}
	w.Flush()
}

func ms(d time.Duration) string { return d.Round(time.Millisecond).String() }

// verboseOut shows the step timings of verbose runs.
func verboseOut(args []string) io.Writer {
	if slices.Contains(args, "--verbose") {
		return os.Stderr
	}
	return io.Discard
}
