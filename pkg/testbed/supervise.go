package testbed

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Supervise runs bin with args as a component of the cluster named name
// until ctx ends, starting it again whenever it exits (after 1 s, doubling
// up to 10 s), as a Deployment restarts its pod. Its output goes to
// LogPath(name); report, when set, is told of each exit. The returned
// channel closes once ctx has ended and the process has stopped, or once
// the cluster's Stop has stopped it (it is not started again then).
func (c *Cluster) Supervise(ctx context.Context, name, bin string, args []string, report func(error)) (<-chan struct{}, error) {
	if slices.Contains(stopOrder, name) {
		return nil, fmt.Errorf("cluster %q: %q is a control-plane component", c.Name, name)
	}
	start := func() (*process, error) {
		p := &process{name: name, bin: bin, args: args, logPath: c.LogPath(name)}
		if err := p.start(); err != nil {
			return nil, fmt.Errorf("cluster %q: %w", c.Name, err)
		}
		c.mu.Lock()
		if c.stopping {
			// Stop has already listed what to stop.
			c.mu.Unlock()
			p.stop(10 * time.Second)
			return nil, fmt.Errorf("cluster %q is stopping", c.Name)
		}
		c.procs[name] = p
		c.mu.Unlock()
		return p, nil
	}
	p, err := start()
	if err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		backoff := wait.Backoff{Duration: time.Second, Factor: 2, Cap: 10 * time.Second, Steps: math.MaxInt32}
		// Each round waits for p to exit; the backoff's delay comes between
		// the exit and the next round, which starts the process again first.
		// A failed start leaves p the exited process and waits another delay.
		restart := false
		_ = wait.DelayFunc(backoff.Step).Until(ctx, true, true, func(context.Context) (bool, error) {
			if restart {
				next, err := start()
				if c.isStopping() {
					return true, nil
				}
				if err != nil {
					if report != nil {
						report(err)
					}
					return false, nil
				}
				p = next
			}
			restart = true
			select {
			case <-ctx.Done():
				p.stop(10 * time.Second)
				return true, nil
			case <-p.done:
			}
			if c.isStopping() {
				return true, nil
			}
			if report != nil {
				report(p.exitError())
			}
			return false, nil
		})
	}()
	return done, nil
}

func (c *Cluster) isStopping() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopping
}
